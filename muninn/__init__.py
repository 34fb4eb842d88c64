"""muninn: safe, findable shared memory on OpenViking for an engineer and their agents."""

__version__ = "0.1.0"
