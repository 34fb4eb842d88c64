"""`python -m muninn.plugins.embed --host H --port P [--config FILE]`: how `muninn up` starts the sidecar."""

import argparse

from muninn.core import config
from muninn.plugins.embed.server import serve

parser = argparse.ArgumentParser(prog="muninn-embed")
parser.add_argument("--host")
parser.add_argument("--port", type=int)
parser.add_argument("--config")
args = parser.parse_args()
settings = config.load(args.config)
serve(settings.embed, host=args.host, port=args.port, billed=settings.paths.billed_tokens)
