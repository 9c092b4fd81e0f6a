"""What spark-pair does beside turns, for the people who run it: telemetry (ops.telemetry)."""
