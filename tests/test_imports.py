"""The package imports without cycles: no two of its modules import each other, directly or through others, at the top
of a module or inside a function; and the tokenizer imports only the base install's packages."""
import ast, subprocess, sys, textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "factorizer_nb"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    p = ROOT.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _imports(path: Path) -> set[str]:
    "The package's modules that `path` imports anywhere in its code (packages' __init__ left out)."
    name, out = _module_name(path), set()
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import): targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else [])) if node.level \
                else node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        else: continue
        out |= {t for t in targets if t.startswith("factorizer_nb.") and _is_module(t)
                and not (ROOT.joinpath(*t.split(".")) / "__init__.py").is_file()}
    return out - {name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    "The strongly connected components of more than one module (Tarjan)."
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in graph.get(v, ()):
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index: visit(v)
    return out


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    graph = {_module_name(p): _imports(p) for p in PKG.rglob("*.py") if p.name != "_modidx.py"}
    assert graph["factorizer_nb.factorizer.tokenizer"] >= {"factorizer_nb.factorizer.vocab"}     # the graph is read
    assert _cycles(graph) == []


def test_the_tokenizer_imports_only_the_base_install():
    code = textwrap.dedent("""
        import sys
        before = set(sys.modules)
        from factorizer_nb.factorizer.tokenizer import Factorizer
        from factorizer_nb.factorizer.vocab import Vocabulary
        from factorizer_nb.factorizer.pretrained import resolve_vocab_file
        from factorizer_nb.core.protocol import load_tokenizer
        Factorizer(Vocabulary([("a", (1, 2, 3), -1.0)])).encode("a").ids     # dawg loads on first use
        print(" ".join(sorted({m.split(".")[0] for m in set(sys.modules) - before} - set(sys.stdlib_module_names))))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout.split()
    heavy = {"torch", "transformers", "pandas", "sentencepiece", "tokenizers", "gensim", "matplotlib", "seaborn",
             "conllu"}
    assert "dawg" in out and "numba" in out and not heavy & set(out), out
