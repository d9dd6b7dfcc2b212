# SPDX-License-Identifier: MIT
"""Random numbers on the card: the Philox generator and the distributions.

Values differ from the CPU generator's (as CUDA's do), so the checks are
reproducibility for a seed, state round trips, independence of streams and
distribution tests with fixed seeds (thresholds far in the tails: a fixed
seed makes each test deterministic, so they never flake).
"""
import math

import pytest
import torch

DEV = "spyre"


@pytest.fixture(autouse=True)
def no_fallback():
    before = dict(torch.spyre.fallback_counts())
    yield
    after = torch.spyre.fallback_counts()
    assert after == before, f"random ops fell back to the CPU: {after}"


def test_reproducible_for_a_seed():
    torch.spyre.manual_seed(123)
    a = torch.rand(1000, device=DEV).cpu()
    b = torch.randn(1000, device=DEV).cpu()
    torch.spyre.manual_seed(123)
    assert torch.equal(a, torch.rand(1000, device=DEV).cpu())
    assert torch.equal(b, torch.randn(1000, device=DEV).cpu())
    torch.spyre.manual_seed(124)
    assert not torch.equal(a, torch.rand(1000, device=DEV).cpu())
    # torch.manual_seed seeds every device's generator too
    torch.manual_seed(7)
    c = torch.rand(10, device=DEV).cpu()
    torch.manual_seed(7)
    assert torch.equal(c, torch.rand(10, device=DEV).cpu())
    assert torch.spyre.initial_seed() == 7


def test_state_round_trip():
    torch.spyre.manual_seed(5)
    torch.rand(3, device=DEV)
    st = torch.spyre.get_rng_state()
    assert st.dtype == torch.uint8 and st.numel() == 16
    x = torch.randn(50, device=DEV).cpu()
    torch.rand(7, device=DEV)
    torch.spyre.set_rng_state(st)
    assert torch.equal(x, torch.randn(50, device=DEV).cpu())
    # seed then offset, as CUDA's state
    seed, offset = st.view(torch.int64).tolist()
    assert seed == 5 and offset == 1
    with pytest.raises(RuntimeError, match="16 bytes"):
        torch.spyre.set_rng_state(torch.zeros(5, dtype=torch.uint8))


def test_generator_objects():
    g = torch.Generator(device=DEV)
    assert g.device.type == DEV
    g.manual_seed(42)
    a = torch.rand(100, device=DEV, generator=g).cpu()
    g2 = torch.Generator(device=DEV).manual_seed(42)
    assert torch.equal(a, torch.rand(100, device=DEV, generator=g2).cpu())
    # the default generator did not move
    torch.spyre.manual_seed(42)
    st = torch.spyre.get_rng_state()
    torch.rand(5, device=DEV, generator=g)
    assert torch.equal(st, torch.spyre.get_rng_state())
    g.set_state(g2.get_state())
    assert torch.equal(torch.rand(9, device=DEV, generator=g).cpu(),
                       torch.rand(9, device=DEV, generator=g2).cpu())
    with pytest.raises(RuntimeError, match="spyre generator"):
        torch.rand(3, device=DEV).uniform_(generator=torch.Generator())


def test_streams_per_offset_uncorrelated():
    torch.spyre.manual_seed(2024)
    a = torch.rand(200000, device=DEV).cpu().double()
    b = torch.rand(200000, device=DEV).cpu().double()
    assert not torch.equal(a, b)
    r = torch.corrcoef(torch.stack([a, b]))[0, 1].item()
    assert abs(r) < 0.015, r   # 1/sqrt(n) = 0.0022
    # neighbouring elements (words of one block, consecutive counters) too
    r1 = torch.corrcoef(torch.stack([a[:-1], a[1:]]))[0, 1].item()
    assert abs(r1) < 0.015, r1


def chi_square_uniform(x, bins):
    counts = torch.bincount(x, minlength=bins).double()
    expect = x.numel() / bins
    return ((counts - expect) ** 2 / expect).sum().item()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_uniform(dtype):
    torch.spyre.manual_seed(1)
    x = torch.empty(100000, device=DEV, dtype=dtype).uniform_(-2, 3).cpu().float()
    assert x.min() >= -2 and x.max() < 3
    assert abs(x.mean().item() - 0.5) < 0.03
    assert abs(x.var().item() - 25 / 12) < 0.06
    # chi-square over 50 bins: 49 degrees of freedom, 99.99% quantile ~ 95
    bins = ((x + 2) / 5 * 50).long().clamp(0, 49)
    if dtype == torch.float32:
        assert chi_square_uniform(bins, 50) < 95


def test_uniform_ks_and_edges():
    torch.spyre.manual_seed(11)
    u = torch.rand(20000, device=DEV).cpu().double().sort().values
    n = u.numel()
    d = torch.maximum(torch.arange(1, n + 1) / n - u, u - torch.arange(n) / n).max().item()
    assert d < 1.95 / math.sqrt(n)   # KS, alpha = 0.001
    assert torch.rand(0, device=DEV).numel() == 0
    assert torch.rand(0, 3, device=DEV).shape == (0, 3)
    e = torch.empty(4, device=DEV).uniform_(2.5, 2.5).cpu()
    assert torch.equal(e, torch.full((4,), 2.5))
    with pytest.raises(RuntimeError, match="from"):
        torch.empty(3, device=DEV).uniform_(2, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_normal(dtype):
    torch.spyre.manual_seed(3)
    x = torch.empty(100001, device=DEV, dtype=dtype).normal_(2.0, 3.0).cpu().double()
    assert abs(x.mean().item() - 2.0) < 0.05
    assert abs(x.std().item() - 3.0) < 0.05
    z = (x - 2) / 3
    assert abs((z ** 3).mean().item()) < 0.05    # skew
    assert abs((z ** 4).mean().item() - 3) < 0.1  # kurtosis
    # KS against the normal CDF
    if dtype == torch.float32:
        s = z.sort().values
        n = s.numel()
        cdf = 0.5 * (1 + torch.erf(s / math.sqrt(2)))
        d = torch.maximum(torch.arange(1, n + 1) / n - cdf, cdf - torch.arange(n) / n).max()
        assert d.item() < 1.95 / math.sqrt(n)
    with pytest.raises(RuntimeError, match="std"):
        torch.empty(3, device=DEV).normal_(0, -1)


def test_randn_forms():
    torch.spyre.manual_seed(9)
    x = torch.randn(3, 4, device=DEV)
    assert x.shape == (3, 4) and x.device.type == DEV
    y = torch.randn_like(x)
    assert y.shape == x.shape and not torch.equal(x.cpu(), y.cpu())
    mean = torch.arange(6.0).to(DEV)
    n = torch.normal(mean, 0.0).cpu()
    assert torch.equal(n, torch.arange(6.0))
    n = torch.normal(mean, torch.full((6,), 1e-3).to(DEV)).cpu()
    assert (n - torch.arange(6.0)).abs().max() < 0.01
    n = torch.normal(1.0, torch.zeros(5).to(DEV)).cpu()
    assert torch.equal(n, torch.ones(5))


def test_exponential():
    torch.spyre.manual_seed(4)
    x = torch.empty(100000, device=DEV).exponential_(2.0).cpu().double()
    assert x.min() >= 0 and torch.isfinite(x).all()
    assert abs(x.mean().item() - 0.5) < 0.01
    assert abs(x.var().item() - 0.25) < 0.01
    with pytest.raises(RuntimeError, match="lambda"):
        torch.empty(3, device=DEV).exponential_(0)


def test_bernoulli():
    torch.spyre.manual_seed(6)
    x = torch.empty(100000, device=DEV).bernoulli_(0.3).cpu()
    assert set(x.unique().tolist()) <= {0.0, 1.0}
    assert abs(x.mean().item() - 0.3) < 0.01
    assert torch.empty(50, device=DEV).bernoulli_(0.0).cpu().sum() == 0
    assert torch.empty(50, device=DEV).bernoulli_(1.0).cpu().sum() == 50
    p = torch.tensor([0.0, 1.0, 0.5, 0.9]).repeat(20000).to(DEV)
    y = torch.bernoulli(p).cpu().view(20000, 4)
    assert y[:, 0].sum() == 0 and y[:, 1].sum() == 20000
    assert abs(y[:, 2].mean().item() - 0.5) < 0.02
    assert abs(y[:, 3].mean().item() - 0.9) < 0.01
    b = torch.empty(1000, device=DEV, dtype=torch.bool).bernoulli_(0.5).cpu()
    assert b.dtype == torch.bool and 400 < b.sum() < 600
    i = torch.empty(1000, device=DEV, dtype=torch.int64).bernoulli_(0.5).cpu()
    assert set(i.unique().tolist()) == {0, 1}
    with pytest.raises(RuntimeError, match="p"):
        torch.empty(3, device=DEV).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="p"):
        torch.empty(3, device=DEV).bernoulli_(torch.tensor([0.5, -1, 0.2]).to(DEV))


def test_random_int_ranges():
    torch.spyre.manual_seed(8)
    x = torch.randint(3, 13, (100000,), device=DEV).cpu()
    assert x.dtype == torch.int64 and x.min() == 3 and x.max() == 12
    assert chi_square_uniform(x - 3, 10) < 33   # 9 d.o.f., 99.99%
    big = torch.randint(-2**40, 2**40, (50000,), device=DEV).cpu()
    assert big.min() >= -2**40 and big.max() < 2**40
    assert big.min() < -2**39 and big.max() > 2**39
    assert abs(big.double().mean().item()) < 2**40 * 0.02
    i32 = torch.randint(-5, 5, (1000,), device=DEV, dtype=torch.int32).cpu()
    assert i32.dtype == torch.int32 and i32.min() == -5 and i32.max() == 4
    full = torch.empty(20000, device=DEV, dtype=torch.int64).random_(-2**63, None).cpu()
    assert (full < 0).any() and (full > 2**62).any()
    wide = torch.empty(20000, device=DEV, dtype=torch.int64).random_(-2**63 + 5, 2**63 - 5).cpu()
    assert wide.min() >= -2**63 + 5 and wide.max() < 2**63 - 5 and (wide < -2**62).any()
    d = torch.empty(20000, device=DEV, dtype=torch.int64).random_().cpu()
    assert d.min() >= 0 and d.max() > 2**62
    f = torch.empty(20000, device=DEV).random_().cpu()
    assert f.min() >= 0 and f.max() <= 2**24 and torch.equal(f, f.round())
    h = torch.empty(20000, device=DEV, dtype=torch.float16).random_(0, 10).cpu()
    assert set(h.unique().tolist()) == set(float(v) for v in range(10))
    b = torch.empty(1000, device=DEV, dtype=torch.bool).random_().cpu()
    assert 400 < b.sum() < 600
    t = torch.empty(1000, device=DEV, dtype=torch.int64).random_(7).cpu()
    assert t.min() == 0 and t.max() == 6
    with pytest.raises(RuntimeError, match="from"):
        torch.empty(3, device=DEV, dtype=torch.int64).random_(5, 5)
    with pytest.raises(RuntimeError):
        torch.randint(0, 2**40, (3,), device=DEV, dtype=torch.int32)


def test_multinomial_with_replacement():
    torch.spyre.manual_seed(12)
    p = torch.tensor([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 0.0, 2.0]])
    s = torch.multinomial(p.to(DEV), 40000, replacement=True).cpu()
    assert s.shape == (2, 40000) and s.dtype == torch.int64
    c = torch.bincount(s[0], minlength=4).double() / 40000
    assert c[1] == 0 and (c - torch.tensor([0.1, 0, 0.6, 0.3], dtype=torch.float64)).abs().max() < 0.01
    assert (s[1] == 3).all()
    one = torch.multinomial(torch.tensor([0.2, 0.8]).to(DEV), 1).cpu()
    assert one.shape == (1,)


def test_multinomial_without_replacement():
    torch.spyre.manual_seed(13)
    p = torch.tensor([0.5, 0.0, 0.25, 0.25, 0.0])
    for _ in range(5):
        s = torch.multinomial(p.to(DEV), 3).cpu()
        assert sorted(s.tolist()) == [0, 2, 3]
    # first draw follows p
    rows = p.repeat(4000, 1).to(DEV)
    first = torch.multinomial(rows, 1).cpu()[:, 0]
    c = torch.bincount(first, minlength=5).double() / 4000
    assert (c - p.double()).abs().max() < 0.03
    with pytest.raises(RuntimeError, match="not enough"):
        torch.multinomial(p.to(DEV), 4)
    with pytest.raises(RuntimeError, match="n_sample > prob_dist"):
        torch.multinomial(p.to(DEV), 6)
    with pytest.raises(RuntimeError, match="inf"):
        torch.multinomial(torch.tensor([0.5, -0.1]).to(DEV), 1)
    with pytest.raises(RuntimeError, match="sum"):
        torch.multinomial(torch.zeros(3).to(DEV), 1)


def test_top_p_sampling_32k_vocab():
    # generate(do_sample=True, top_p=...) samples from a 32k vocabulary
    torch.spyre.manual_seed(14)
    logits = torch.randn(2, 32000, generator=torch.Generator().manual_seed(0)) * 3
    probs = torch.softmax(logits, -1)
    probs[:, 1000:] = 0
    s = torch.multinomial(probs.to(DEV), 1).cpu()
    assert s.shape == (2, 1) and (s < 1000).all()


def test_randperm():
    torch.spyre.manual_seed(15)
    for n in (0, 1, 10, 1000):
        p = torch.randperm(n, device=DEV).cpu()
        assert p.dtype == torch.int64
        assert torch.equal(p.sort().values, torch.arange(n))
    a = torch.randperm(1000, device=DEV).cpu()
    assert not torch.equal(a, torch.arange(1000))
    # position of element 0 over many permutations is uniform
    pos = torch.stack([torch.randperm(8, device=DEV).cpu().argmin() for _ in range(400)])
    assert chi_square_uniform(pos, 8) < 30
    i32 = torch.randperm(20, device=DEV, dtype=torch.int32).cpu()
    assert i32.dtype == torch.int32 and torch.equal(i32.sort().values, torch.arange(20, dtype=torch.int32))


def test_dropout_training():
    torch.spyre.manual_seed(16)
    x = torch.ones(100000, device=DEV)
    y = torch.nn.functional.dropout(x, 0.25, training=True).cpu()
    assert set(y.unique().tolist()) == {0.0, torch.tensor(1 / 0.75).item()}
    assert abs((y == 0).double().mean().item() - 0.25) < 0.01
    assert torch.equal(torch.nn.functional.dropout(x, 0.25, training=False).cpu(), x.cpu())
    assert torch.nn.functional.dropout(x, 1.0, training=True).cpu().sum() == 0
    h = torch.nn.functional.dropout(torch.ones(100, device=DEV, dtype=torch.float16), 0.5, True)
    assert h.dtype == torch.float16
    m = torch.nn.Dropout(0.5).train()
    xi = torch.ones(64, device=DEV, requires_grad=True)
    m(xi).sum().backward()
    g = xi.grad.cpu()
    assert set(g.unique().tolist()) <= {0.0, 2.0}


def test_accelerator_paths():
    torch.random.manual_seed(21)
    a = torch.rand(5, device=DEV).cpu()
    torch.spyre.manual_seed_all(21)
    assert torch.equal(a, torch.rand(5, device=DEV).cpu())
    s = torch.spyre.seed()
    assert torch.spyre.initial_seed() == s
    with torch.random.fork_rng(devices=[0], device_type=DEV):
        torch.rand(3, device=DEV)
    st = torch.spyre.get_rng_state()
    torch.spyre.manual_seed(s)
    assert torch.equal(st, torch.spyre.get_rng_state())


def random_opinfos():
    from torch.testing._internal.common_methods_invocations import op_db
    names = ("rand", "normal", "bernoulli", "multinomial", "dropout", "uniform",
             "exponential", "randint", "randperm")
    return [op for op in op_db if any(n in op.name for n in names)
            and "normalize" not in op.name and op.name != "log_normal"]


@pytest.mark.parametrize("op", random_opinfos(),
                         ids=lambda op: op.name + ("." + op.variant_test_name
                                                   if op.variant_test_name else ""))
def test_opinfo_samples_on_the_card(op):
    """The random ops' OpInfo samples run on the card (no fallback) with
    the CPU's shapes and dtypes; values are checked by distribution above."""
    ran = 0
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32):
        if dtype not in op.supported_dtypes("cpu"):
            continue
        for sample in list(op.sample_inputs("cpu", dtype, requires_grad=False))[:6]:
            if not torch.is_tensor(sample.input) or "device" in sample.kwargs:
                continue
            try:
                want = op(sample.input.clone(), *sample.args, **sample.kwargs)
            except Exception:
                continue
            outs = want if isinstance(want, tuple) else (want,)
            if any(w.dtype not in CARD_DTYPES for w in outs):   # float64 takes the CPU
                continue
            dev = sample.transform(lambda t: t.to(DEV) if torch.is_tensor(t) else t)
            torch.spyre.set_fallback_mode("error")
            try:
                got = op(dev.input, *dev.args, **dev.kwargs)
            except NotImplementedError:
                if dtype.is_floating_point:   # integer gradients may take the CPU
                    raise
                continue
            finally:
                torch.spyre.set_fallback_mode("warn")
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                assert g.device.type == DEV and g.shape == w.shape and g.dtype == w.dtype
                if w.dtype.is_floating_point:
                    assert torch.isfinite(g.cpu()).all() == torch.isfinite(w).all()
            ran += 1
    RAN[op.name + "." + op.variant_test_name] = ran


RAN = {}
CARD_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
               torch.bool)
