"""Meta-evaluation: agreement of metrics with human judgments."""
