"""Is this an undeclared secret? The detector (`detect.py`) that finds credentials nobody declared, by their
labels, vendor words and shapes (`credential_words.py`) and the options programs take them in
(`credential_options.py`), and the review file of what it found (`review.py`). Its redaction rule is
`guards/rules/undeclared.py`; the leak gate reads undeclared secrets with its own code (`guards/gate/`)."""
