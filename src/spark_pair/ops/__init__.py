"""Operating spark-pair against an endpoint, beside the pair programming itself: `doctor`
(checks base URL, key and model end to end) and `bench` (the concurrency sweep and its chart).
Plain results; the commands in cli/ render them."""
