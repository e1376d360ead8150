"""The model's records in other shapes: Prometheus text exposition (``prometheus``)."""
