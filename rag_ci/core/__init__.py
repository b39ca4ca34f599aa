"""The pure core: question set, routing, metrics, aggregation, comparison, rendering.

Nothing in this package performs I/O or imports deepeval, docker or github.
"""
