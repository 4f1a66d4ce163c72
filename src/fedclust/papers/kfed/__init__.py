"""What only k-FED (Dennis, Li & Smith, ICML 2021) uses: its declarations, experiments, figures,
claims, captions and rules."""
