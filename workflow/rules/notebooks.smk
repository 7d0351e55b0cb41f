# A rule per planned notebook job: its executed copy, and the committed figures and tables it rewrites (flagged
# `update`: kept until the notebook rewrites them, put back if it fails, and never deleted).

def _rule_for(j):
    rule:
        name: j.rule
        input:
            notebook=str(j.notebook),
            after=[str(JOBS[k].copy) if k in JOBS else k for k in j.after],
        output:
            executed=str(j.copy),
            figures=[update(str(ROOT / f)) for f in j.outputs],
        params:
            fingerprint=j.fingerprint(),
            command=j.command(),
        log:
            str(ROOT / "runs" / "logs" / f"{j.key.replace('/', '_')}.log"),
        threads: THREADS
        resources:
            **resources_of(j),
        shell:
            THREAD_ENV + " {params.command} 2>&1 | tee {log}; test ${{PIPESTATUS[0]}} -eq 0"


for _j in JOBS.values():
    _rule_for(_j)


def _stamp_rule(path, copies):
    "Mark a set of notebook runs finished, as the notebook that reads them (22_seed_spread: `figures/.done`) expects."
    rule:
        name: "done_" + re.sub(r"\W", "_", str(Path(path).relative_to(ROOT / "runs")))
        input: copies
        output: path
        localrule: True
        shell: "echo finished > {output}"


for _path, (_, _copies) in STAMPS.items():
    _stamp_rule(_path, _copies)
