"""``simkit train``: self-play rollouts, the value network's fit, generations (the layer above the studies)."""
