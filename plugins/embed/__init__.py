"""The embedding sidecar: an OpenAI-compatible /v1/embeddings over a local sentence-transformers model.

OpenViking's `openai` embedding provider points at it, so nothing is fetched from a model hub.
"""
