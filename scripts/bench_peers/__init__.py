"""scripts/bench-peers: bedrud-bot next to the recorders an operator would write instead."""
