"""dptool: benchmarks for data agents from a dbt repo's own metrics and business rules."""

__version__ = "0.1.0"
