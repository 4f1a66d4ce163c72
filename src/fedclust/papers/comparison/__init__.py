"""What only the cross-paper comparison of every algorithm on shared data uses: its declarations,
experiments, figures, claims, captions and rules."""
