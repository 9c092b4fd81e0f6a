"""spark-pair: a terminal pair programmer for Spark-class coding models."""

__version__ = "0.1.0"
