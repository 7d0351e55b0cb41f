"Dijkstra split against brute force, and the properties the paper's score implies."
import math, random
from functools import lru_cache
from hypothesis import given, settings, strategies as st
from factorizer_nb.factorizer.search import shortest_split
from factorizer_nb.factorizer.vocab import Vocabulary

# log-probabilities and alphas on a 1/4 grid are exact in binary, so ties compare exactly
logps = st.integers(min_value=-24, max_value=-1).map(lambda k: k / 4)
alphas = st.integers(min_value=0, max_value=12).map(lambda k: k / 4)
pieces = st.text(alphabet="abc", min_size=1, max_size=4)
vocabs = st.dictionaries(pieces, logps, min_size=1, max_size=25)
words = st.text(alphabet="abc", min_size=0, max_size=9)


def make_vocab(d):
    return Vocabulary([(w, (i % 256, 0, 0), lp) for i, (w, lp) in enumerate(sorted(d.items()))])


def brute_force(d, word, alpha):
    "Minimum total score over every segmentation of `word` into pieces of `d` (None if none)."
    @lru_cache(maxsize=None)
    def best(i):
        if i == len(word): return 0.0
        costs = [alpha - d[word[i:j]] + rest for j in range(i + 1, len(word) + 1)
                 if word[i:j] in d and (rest := best(j)) is not None]
        return min(costs) if costs else None
    return best(0)


def cost(path, alpha):
    return sum(alpha - lp for _, _, lp, _ in path)


@settings(max_examples=300, deadline=None)
@given(vocabs, words, alphas)
def test_dijkstra_matches_brute_force(d, word, alpha):
    path = shortest_split(make_vocab(d), word, alpha_split=alpha)
    expected = brute_force(d, word, alpha)
    if expected is None:
        assert path is None
    else:
        assert path is not None and math.isclose(cost(path, alpha), expected, abs_tol=1e-9)
        assert "".join(word[a:b] for a, b, _, _ in path) == word
        assert all(word[a:b] in d for a, b, _, _ in path)


@settings(max_examples=200, deadline=None)
@given(vocabs, words, alphas, alphas)
def test_larger_alpha_never_adds_splits(d, word, a1, a2):
    lo, hi = sorted((a1, a2))
    v = make_vocab(d)
    p_lo, p_hi = shortest_split(v, word, alpha_split=lo), shortest_split(v, word, alpha_split=hi)
    assert (p_lo is None) == (p_hi is None)
    if p_lo is not None: assert len(p_hi) <= len(p_lo)


@settings(max_examples=150, deadline=None)
@given(vocabs, words, alphas, st.integers(0, 2**32 - 1))
def test_sigma_zero_is_the_optimal_split(d, word, alpha, seed):
    v = make_vocab(d)
    sampled = shortest_split(v, word, alpha_split=alpha, sigma_sample=0.0, seed=seed)
    assert sampled == shortest_split(v, word, alpha_split=alpha)


@settings(max_examples=100, deadline=None)
@given(vocabs, words, st.integers(0, 2**32 - 1))
def test_sampled_split_is_valid_and_seeded(d, word, seed):
    v = make_vocab(d)
    a = shortest_split(v, word, alpha_split=0.1, sigma_sample=0.5, seed=seed)
    b = shortest_split(v, word, alpha_split=0.1, sigma_sample=0.5, seed=seed)
    assert a == b
    assert (a is None) == (brute_force(d, word, 0.1) is None)
    if a is not None: assert "".join(word[s:e] for s, e, _, _ in a) == word


def test_sampling_explores_several_splits():
    v = make_vocab({"a": -1.0, "b": -1.0, "ab": -2.0, "abab": -4.5})
    seen = {tuple((s, e) for s, e, _, _ in shortest_split(v, "abab", 0.0, 1.0, seed=k)) for k in range(200)}
    assert len(seen) >= 3
