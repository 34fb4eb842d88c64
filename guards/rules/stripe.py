"""Stripe secret, restricted and publishable keys, live and test."""

from __future__ import annotations

import re

from muninn.guards.rules import Rule


class StripeKey(Rule):
    name = "stripe-key"
    patterns = (re.compile(r"(?:sk|rk|pk|whsec)_(?:(?:live|test)_)?[A-Za-z0-9]{16,}"),)
    boundary = True
    triggers = ("sk_", "rk_", "pk_", "whsec_")
