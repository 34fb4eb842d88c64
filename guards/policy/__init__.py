"""What may an agent reach, and how is what it reads labelled? Tool policy (`tools.py`: which tools a
profile sees and calls), URI canonicalisation and prefix checks (`uri.py`), and the `<untrusted-data>`
label (`label.py`). The MCP server and the search CLI both apply them, so they live below both."""
