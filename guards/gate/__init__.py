"""The leak gate: an independent second reader over rendered files, before anything is synced. Its own
matching code by design (it shares only the forms table of `guards/known/` with the redactor), so a miss of
one reader is not a miss of both; `tests/test_gate_pins_rules.py` pins its pattern table against the rules."""
