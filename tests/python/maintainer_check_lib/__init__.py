"""The parts of `tests/python/maintainer_check.py` (an independent re-check of bug bundles), by
role:

- `common`: the checks, tolerances and limits, and the small helpers of both sides;
- `worker`: one check of one model with one library, in its own process;
- `launch`: starting a worker under a time limit and reading back what it left;
- `compare`: outputs against the bundle's expected values;
- `bundle`: every check of one bundle, and the suggestion drawn from them;
- `report`: the Markdown table, the details and the JSON records.
"""
