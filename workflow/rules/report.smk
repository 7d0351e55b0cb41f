# The batch's last step, on the machine that runs Snakemake: the results index and the README from the committed CSVs,
# and, after the small profile trained from raw data, the reproduction report (this run against the committed one).
REPORT_TARGETS = []

if REPORT:
    _langs = sorted({j.lang for j in JOBS.values() if j.profile == "small" and j.pins == "off" and j.lang != "summary"})
    _out = ROOT / "runs" / "workflow" / f"report-{config['batch']}.txt"
    REPORT_TARGETS.append(str(_out))
    localrules: report

    rule report:
        "The results index, the README and (small profile, trained) the reproduction report, printed and kept."
        input: [str(j.copy) for j in JOBS.values()] + HEAVY_TARGETS
        output:
            report=str(_out),
            index=[update(str(ROOT / f)) for f in ("figures/results_index.md", "figures/results_index.csv",
                                                   "README.md")],
        shell:
            f"({PYTHON} -m factorizer_nb.infra.results_index && {PYTHON} -m factorizer_nb.infra.readme"
            + (f" && {PYTHON} -m factorizer_nb.infra.repro_report --langs {' '.join(_langs)}" if _langs else "")
            + ") > {output.report} 2>&1; rc=$?; cat {output.report}; exit $rc"
