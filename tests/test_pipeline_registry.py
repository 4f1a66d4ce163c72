"""The registry: every figure, table and claim declared once, with captions from the config."""

import re

import pytest
import yaml

from fedclust.papers.kfed import declare as kfed
from fedclust.papers.localkmeans import declare as localkmeans
from fedclust.pipeline import registry
from fedclust.pipeline.config import validate_config
from fedclust.vocabulary import resolve

from .conftest import REPO


def merged(base: dict, override: dict) -> dict:
    """``override`` over ``base``, nested sections merged key by key (as Snakemake merges a
    --configfile over the default one)."""
    out = dict(base)
    for key, value in override.items():
        out[key] = (merged(base[key], value)
                    if isinstance(value, dict) and isinstance(base.get(key), dict) else value)
    return out


def config(profile=None):
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    if profile:
        cfg = merged(cfg, yaml.safe_load((REPO / "config" / profile).read_text()))
    return validate_config(cfg, REPO / "config" / "schema.yaml")


@pytest.fixture(params=[None, "ci.yaml"], ids=["paper", "quick"])
def cfg(request):
    return config(request.param)


def test_targets_cover_every_enabled_figure_and_paper(cfg):
    targets = registry.targets(cfg)
    names = registry.figure_names(cfg)
    assert set(names) == {"kfed", "localkmeans", "coreset", "fedkmeans", "comparison"}
    assert set(names["comparison"]) == {"pareto_bytes", "pareto_rounds", "dropout",
                                        "heterogeneity"}
    assert {"sweep_fig1", "sweep_fig5b", "progress_fig6", "progress_fig7b"} <= set(
        names["fedkmeans"])
    assert "fig5_separation_mnist" in names["kfed"]
    assert {"fig2_msd_mixture", "fig3_bytes_msd_mixture", "diameter"} <= set(names["coreset"])
    # the k-median panel is beyond the paper: the quick profile builds it, the paper's does not
    assert ("kmedian_msd_mixture" in names["coreset"]) == (cfg["profile"] == "quick")
    for paper, figs in names.items():
        assert f"results/{paper}/claims.csv" in targets
        for name in figs:
            assert f"figures/{paper}_{name}.png" in targets
            assert f"figures/{paper}_{name}.pdf" in targets
            assert re.fullmatch(registry.figure_pattern(paper), name)
    assert len(targets) == len(set(targets))


def test_disabling_drops_the_figures_and_the_claims():
    cfg = config()
    cfg["kfed"]["fig2"]["datasets"] = []
    assert "fig2_structured_vs_iid" not in registry.figure_names(cfg)["kfed"]
    assert "fig2" not in registry.claims_inputs("kfed", cfg)
    cfg["localkmeans"]["enabled"] = False
    assert not any("localkmeans" in t for t in registry.targets(cfg))


def test_captions_render_from_the_config_and_cite_only_produced_files(cfg):
    produced = set(registry.targets(cfg))
    for paper, names in registry.figure_names(cfg).items():
        for name in names:
            caption = registry.figure_caption(paper, name, cfg)
            assert len(caption) > 100 and "{" not in caption
            for path in re.findall(r"(?<![\w/])(?:results|figures|data)/[\w./-]+\.\w+", caption):
                assert path in produced, (name, path)
            # a committed benchmark a caption cites exists
            for path in re.findall(r"benchmarks/results/[\w./-]+\.\w+", caption):
                assert (REPO / path.rstrip(".")).is_file(), (name, path)
    sep = cfg["kfed"]["separation"]
    caption = registry.figure_caption("kfed", "fig5_separation_femnist", cfg)
    assert f"c0 = {sep['threshold']:g}" in caption and "FEMNIST" in caption
    assert f"{cfg['kfed']['fig1']['runs']} runs" in registry.figure_caption(
        "kfed", "fig1_accuracy_vs_separation", cfg)
    assert registry.table_caption("kfed", "table1", cfg).count("m0 = 5") == 1
    assert "c0 =" in registry.table_caption("kfed", "chosen_k", cfg)


def test_every_caption_is_valid_restructuredtext(cfg):
    """The report renders captions with docutils: any message it would print (an undefined
    substitution such as a bare ``|x|``, a broken list) fails here, caption by caption."""
    from docutils.core import publish_doctree
    from docutils.utils import SystemMessage

    captions = [(f"{paper} {name}", registry.figure_caption(paper, name, cfg))
                for paper, names in registry.figure_names(cfg).items() for name in names]
    captions += [(f"{key} {name}", registry.table_caption(key, name, cfg))
                 for key, declared in registry.papers().items()
                 for name in declared.table_captions]
    for where, caption in captions:
        try:
            publish_doctree(caption, settings_overrides={
                "report_level": 2, "halt_level": 2, "warning_stream": False})
        except SystemMessage as error:
            raise AssertionError(f"{where}: {error}") from None


def test_every_caption_template_is_declared_or_imported_and_every_declared_one_exists():
    """Each paper's captions/ folder holds the templates its figures and tables declare and the
    fragments (``_*.rst``) they import, nothing else."""
    from jinja2 import Environment, FileSystemLoader, meta

    from fedclust.pipeline.captions import CAPTIONS

    assert CAPTIONS == REPO / "src" / "fedclust" / "papers"
    # template "<paper>/<file>" is the file <paper>/captions/<file>
    files = {f"{p.parent.parent.name}/{p.name}": p for p in CAPTIONS.glob("*/captions/*")
             if p.is_file()}
    declared = registry.caption_templates()
    assert declared <= set(files), f"declared, missing: {sorted(declared - set(files))}"
    environment = Environment(loader=FileSystemLoader(CAPTIONS))
    used, pending = set(), list(declared)
    while pending:
        name = pending.pop()
        if name not in used:
            used.add(name)
            source = files[name].read_text()
            pending += meta.find_referenced_templates(environment.parse(source))
    assert set(files) == used, f"neither declared nor imported: {sorted(set(files) - used)}"
    fragments = {name for name in used if name.rpartition("/")[2].startswith("_")}
    assert fragments == used - declared


def test_a_caption_renders_on_one_line_and_a_missing_name_is_an_error(tmp_path):
    from jinja2 import UndefinedError

    from fedclust.pipeline.captions import render

    (tmp_path / "figure.rst").write_text(
        '{# not rendered #}\nc = {{ c | formatted("g") }} ({{ spec["values"] }},\n'
        '    {{ n | formatted(",") }})\n{%- if spec["values"] -%}\n.\n{%- endif %}\n')
    context = {"c": 100.0, "n": 78095, "spec": {"values": [1, 2]}}
    assert render("figure.rst", context, tmp_path) == "c = 100 ([1, 2], 78,095)."
    # a subscript is the key, and a missing key an error (Jinja would render the dict's method)
    with pytest.raises(UndefinedError, match="values"):
        render("figure.rst", {**context, "spec": {}}, tmp_path)


def test_figure_inputs_are_gathered_tables_or_rule_outputs(cfg):
    gathered = {f"results/{p}/{t}.csv" for p, ts in registry.gathered_tables().items()
                for t in ts}
    # per-data-set figures read their settings' tables, which the gathered table concatenates
    parts = {p for t in ("graphs", "kmedian", "diameter")
             for p in registry.table_parts("coreset", t, cfg)}
    parts |= {p for t in ("sweeps", "progress", "real")
              for p in registry.table_parts("fedkmeans", t, cfg)}
    parts |= {p for t in ("fig4", "fig4_devices") for p in registry.table_parts("kfed", t, cfg)}
    for paper, names in registry.figure_names(cfg).items():
        for name in names:
            for path in registry.figure_inputs(paper, name, cfg):
                assert path in gathered or path in parts \
                    or path.startswith("results/kfed/separation/")


def test_table_parts_follow_the_config(cfg):
    parts = registry.table_parts("kfed", "fig3", cfg)
    assert parts == [f"results/kfed/fig3/{ds}.csv" for ds in cfg["kfed"]["fig3"]["datasets"]]
    assert registry.table_parts("localkmeans", "fig1", cfg)[0].startswith(
        "results/localkmeans/fig1/snr")
    with pytest.raises(ValueError, match="gathers no table 'nope'"):
        registry.table_parts("kfed", "nope", cfg)


def test_plot_and_claim_functions_resolve(cfg):
    for key in registry.papers():
        assert callable(resolve(f"fedclust.papers.{key}.claims:claims"))
        for name in registry.figure_names(cfg).get(key, []):
            assert callable(resolve(registry.plot_function(key, name, cfg)))
    with pytest.raises(ValueError, match="'fedclust.plots' is not a 'module:function' name"):
        resolve("fedclust.plots")


def test_unknown_names_are_refused(cfg):
    with pytest.raises(ValueError, match="unknown paper 'coresets'"):
        registry.paper("coresets")
    with pytest.raises(ValueError, match="kfed has no enabled figure 'fig9'"):
        registry.figure("kfed", "fig9", cfg)
    with pytest.raises(ValueError, match="kfed declares no table caption 'table2'"):
        registry.table_caption("kfed", "table2", cfg)
    with pytest.raises(ValueError, match="unknown initialization"):
        localkmeans.init_of_file_name("kmeans")


def test_oracle_inputs_for_chosen_and_fixed_k(cfg):
    files = kfed.oracle_inputs("fig2", "femnist", cfg)
    assert len(files["oracles"]) == len(cfg["kfed"]["separation"]["k_grid"])
    assert files["chosen"] == "results/kfed/separation/femnist/chosen_k.csv"
    assert kfed.oracle_inputs("fig3", "femnist", cfg) == files
    with pytest.raises(ValueError, match="'chosen' needs postures in kfed.separation"):
        kfed.oracle_ks("fig2", "postures", cfg)


def test_each_stated_reason_to_differ_is_in_its_figures_caption(cfg):
    from fedclust.reproduction import load_targets
    targets = load_targets(REPO / cfg["paper_targets"])
    for section, figures in {"fig1": ["fig1_misclustering"], "fig4": ["fig4_sweeps"],
                             "real": ["fig2_misclustering_real", "fig3_objective_real"]}.items():
        reasons = [spec["why_ours_differs"].split(".")[0]
                   for spec in targets["localkmeans"][section].values()
                   if isinstance(spec, dict) and "why_ours_differs" in spec]
        assert reasons, section
        for name in figures:
            caption = registry.figure_caption("localkmeans", name, cfg)
            assert all(reason in caption for reason in reasons), (name, reasons)
    # a section without stated reasons adds nothing
    assert registry.stated_differences(cfg, "kfed", "table1") == ""


def test_the_comparison_runs_natural_partitions_only_where_devices_are_natural(cfg):
    from fedclust.papers.comparison import declare as comparison

    settings = comparison.settings(cfg)
    assert ("femnist", "natural") in settings and ("shakespeare", "natural") in settings
    assert ("mnist", "natural") not in settings and ("mixture", "natural") not in settings
    assert comparison.natural_datasets(cfg) == ["femnist", "shakespeare"]
    parts = registry.table_parts("comparison", "table", cfg)
    assert parts == [comparison.setting_part(ds, p) for ds, p in settings]
    # a job sees its data set's k and not the other jobs' lists
    job = comparison.job_settings(cfg, "mnist")
    assert job["n_clusters"] == cfg["comparison"]["n_clusters"]["mnist"]
    assert not {"datasets", "partitions", "mix_fractions", "mixture"} & set(job)
    assert "mix_fractions" in comparison.job_settings(cfg, "femnist", heterogeneity=True)
    assert comparison.features("mixture") == []
    # federated k-means' reassignment is stated from the section, as the job gets it
    fkm = job["fedkmeans"]
    caption = registry.figure_caption("comparison", "pareto_bytes", cfg)
    assert (f"re-initialized after {fkm['reassign_after']} rounds below a fraction "
            f"{fkm['reassign_fraction']:g} of the round's rows") in caption


def test_the_catalogue_lists_every_figure_and_table_with_its_gist(cfg):
    rows = registry.catalogue(cfg)
    files = [row["file"] for row in rows]
    assert len(files) == len(set(files))
    figures = {f for f in files if f.startswith("figures/")}
    assert figures == {t for t in registry.targets(cfg) if t.endswith(".png")}
    for row in rows:
        if row["kind"] == "figure":
            assert 10 < len(row["about"]) <= 94, row
    assert {"results/reproduction.md", "results/kfed/claims.csv"} <= set(files)


def test_a_mistyped_figure_names_the_nearest_ones(cfg):
    registry.check_figure_name("figures/kfed_fig1_accuracy_vs_separation.pdf", cfg)
    with pytest.raises(ValueError, match=r"no figure figures/kfed_fig1_acuracy_vs_separation.png "
                       r"in this config; did you mean figures/kfed_fig1_accuracy_vs_separation"
                       r".png\b"):
        registry.check_figure_name("figures/kfed_fig1_acuracy_vs_separation.png", cfg)
    with pytest.raises(ValueError, match="targets lists every table and figure"):
        registry.check_figure_name("figures/zzz.png", cfg)


def test_the_targets_command_prints_the_catalogue(capsys):
    from fedclust.pipeline.targets import main

    assert main(["--root", str(REPO), "--configfile", str(REPO / "config" / "ci.yaml")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"figures/kfed_fig1_accuracy_vs_separation.png +accuracy of k-FED", out)
    assert out.rstrip().endswith("(each figure's PDF beside its PNG)")


def test_the_targets_command_names_a_bad_config_file_and_its_line(tmp_path, capsys):
    from fedclust.pipeline.targets import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: 3\nkfed:\n  table1: {runs: [1, 2\n")
    assert main(["--root", str(REPO), "--configfile", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"config file {bad}, line ")
    assert main(["--root", str(REPO), "--configfile", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml: No such file or directory" in capsys.readouterr().err
    bad.write_text("fedkmeans:\n  seeds: '3'\n")
    assert main(["--root", str(REPO), "--configfile", str(bad)]) == 2
    assert "config key 'fedkmeans.seeds': '3' is not of type integer" in capsys.readouterr().err



def test_algorithm_rank_sorts_by_the_vocabulary_and_others_after_in_their_order():
    import pandas as pd

    from fedclust.vocabulary import algorithm_rank

    table = pd.DataFrame({"algorithm": ["mine", "fedkmeans", "kfed", "other", "centralized"]})
    ordered = table.sort_values("algorithm", key=algorithm_rank, kind="stable")
    assert ordered["algorithm"].tolist() == ["centralized", "kfed", "fedkmeans", "mine", "other"]


def test_a_figure_file_leads_by_grep_to_its_function_and_its_experiment(cfg):
    """``figures/<paper>_<name>.png`` is drawn by ``def <name>(`` in the paper's figures.py
    (the instance field left out: one grep), whose docstring names the experiment function
    that writes its tables (the second hop)."""
    from importlib import import_module

    readers = {"figures", "claims", "summaries", "declare"}
    for key, names in registry.figure_names(cfg).items():
        source = (REPO / "src" / "fedclust" / "papers" / key / "figures.py").read_text()
        module = import_module(f"fedclust.papers.{key}.figures")
        for name in names:
            fig, _ = registry.figure(key, name, cfg)
            assert name.startswith(fig.function)
            assert re.search(rf"^def {fig.function}\(", source, flags=re.M), (key, name)
            cited = re.findall(r":func:`~?(fedclust\.papers\.[\w.]+)`",
                               getattr(module, fig.function).__doc__)
            experiments = [c for c in cited if c.split(".")[3] not in readers]
            assert experiments, f"{key} {name}: its docstring names no experiment"
            for dotted in experiments:
                where, _, function = dotted.rpartition(".")
                assert callable(resolve(f"{where}:{function}")), dotted
