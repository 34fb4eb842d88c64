"""Can this observation's dates be true now? `check.py` refuses an observation dated after now, reading
the dates people write (`grammar.py`), words that can only point ahead (`words.py`) and dates without a
year (`yearless.py`). The search side's query dates stay with search."""
