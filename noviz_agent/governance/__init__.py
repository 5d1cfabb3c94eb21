"""Governance of cost and access, frappe-free: what the frappe edge enforces with Redis and the database.

- `budgets.py`   monthly token and money caps (site, role, person): reserve before the model is
                 called, settle after; the strictest cap refuses, with its reset date.
- `rate_gate.py` tokens per minute to one provider, shared by every worker through a counter store.
- `cache.py`     a person's own answers reused for an exact or very similar first question.
- `retention.py` which conversations and logs are old enough to remove.
"""
