"""The pipeline's stages, one small class a module; the contract is in state.py, the order in pipeline.py."""
