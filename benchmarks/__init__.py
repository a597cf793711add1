"""Benchmarks for reader: ratios measured side by side in one run, or counts.

`python -m benchmarks` runs them all and prints a Markdown table; each module runs on
its own too (`python -m benchmarks.open_ready`). See benchmarks/README.md.
"""
