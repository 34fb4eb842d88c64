"""The small core every part builds on: config, errors, paths, credentials, the OpenViking client."""
