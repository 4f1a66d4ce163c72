"""What only LocalKMeans (2025) uses: its declarations, experiments, figures, claims, captions and
rules, and the names they share (below)."""

__all__ = ["INIT_FILE_NAMES", "FIG4_SWEEPS", "OTHER_HOLD"]

#: LocalKMeans: how an initialization is spelled in file names.
INIT_FILE_NAMES = {"k-means++": "kmeanspp", "perturbed": "perturbed"}
#: LocalKMeans: Figure 4's sweeps (App. B.2).
FIG4_SWEEPS = ("snr", "n_clusters", "n_machines", "n_clusters_other")
#: The K sweep of Fig 4(b) run again holding the other quantity than
#: ``localkmeans.fig4.n_clusters_holds`` (r or Delta/sigma), so that the report gives both
#: readings of the figure's setup.
OTHER_HOLD = {"separation": "snr", "snr": "separation"}
