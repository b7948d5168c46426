"""``jax.scipy.stats``' distributions beyond ``norm``, with JAX's functions and arguments: ``t``, ``cauchy``,
``laplace``, ``logistic``, ``gamma``, ``beta``, ``chi2``, ``expon``, ``uniform``, ``pareto``, ``gumbel_r``,
``gumbel_l``, ``multivariate_normal``, ``dirichlet`` and the discrete ``poisson``, ``bernoulli``, ``geom``,
``binom``, ``nbinom``. Each is written with chainrule's NumPy functions and special functions, so differentiable
in every continuous argument, to any order; outside the support a log density is ``-inf`` (as JAX's).

``beta.cdf`` (and its log and survival forms) needs the regularized incomplete beta function, which chainrule
lacks: they raise, naming it.

Example:
    >>> import chainrule as cr
    >>> from chainrule.scipy.stats import t
    >>> round(float(t.logpdf(0.0, 3.0)), 6)
    -1.000889
"""

from __future__ import annotations

import math
from typing import Any

from .. import numpy as cnp
from .. import special

_LOG_PI, _LOG_2PI = math.log(math.pi), math.log(2 * math.pi)


def _z(x: Any, loc: Any, scale: Any) -> Any:
    return (x - loc) / scale


def _support(inside: Any, value: Any, outside: float = -math.inf) -> Any:
    return cnp.where(inside, value, outside)


class t:  # noqa: N801  (scipy's names)
    """Student's t with ``df`` degrees of freedom."""

    @staticmethod
    def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        z = _z(x, loc, scale)
        half = (df + 1) / 2
        return (special.gammaln(half) - special.gammaln(df / 2) - 0.5 * cnp.log(df) - 0.5 * _LOG_PI
                - cnp.log(scale) - half * cnp.log1p(z * z / df))

    @staticmethod
    def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(t.logpdf(x, df, loc, scale))


class cauchy:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        z = _z(x, loc, scale)
        return -_LOG_PI - cnp.log(scale) - cnp.log1p(z * z)

    @staticmethod
    def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(cauchy.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return 0.5 + cnp.arctan(_z(x, loc, scale)) / math.pi

    @staticmethod
    def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.log(cauchy.cdf(x, loc, scale))

    @staticmethod
    def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return 0.5 - cnp.arctan(_z(x, loc, scale)) / math.pi

    @staticmethod
    def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.log(cauchy.sf(x, loc, scale))

    @staticmethod
    def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return loc + scale * cnp.tan(math.pi * (q - 0.5))

    @staticmethod
    def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return loc + scale * cnp.tan(math.pi * (0.5 - q))


class laplace:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return -math.log(2) - cnp.log(scale) - cnp.abs(_z(x, loc, scale))

    @staticmethod
    def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(laplace.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        z = _z(x, loc, scale)
        return cnp.where(z < 0, 0.5 * cnp.exp(cnp.minimum(z, 0)), 1 - 0.5 * cnp.exp(-cnp.maximum(z, 0)))


class logistic:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        z = _z(x, loc, scale)
        return -cnp.log(scale) - 2 * cnp.logaddexp(z / 2, -z / 2)

    @staticmethod
    def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(logistic.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return special.expit(_z(x, loc, scale))

    @staticmethod
    def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return special.expit(-_z(x, loc, scale))

    @staticmethod
    def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return loc + scale * special.logit(x)

    @staticmethod
    def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return loc - scale * special.logit(x)


class gamma:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
        y = _z(x, loc, scale)
        inside = y >= 0
        y = cnp.where(inside, y, 1.0)
        return _support(inside, special.xlogy(a - 1, y) - y - special.gammaln(a) - cnp.log(scale))

    @staticmethod
    def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(gamma.logpdf(x, a, loc, scale))

    @staticmethod
    def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return special.gammainc(a, cnp.maximum(_z(x, loc, scale), 0))

    @staticmethod
    def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.log(gamma.cdf(x, a, loc, scale))

    @staticmethod
    def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return special.gammaincc(a, cnp.maximum(_z(x, loc, scale), 0))

    @staticmethod
    def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.log(gamma.sf(x, a, loc, scale))


class chi2:  # noqa: N801
    """The gamma distribution with ``a = df / 2`` and twice the scale."""

    @staticmethod
    def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return gamma.logpdf(x, df / 2, loc, 2 * scale)

    @staticmethod
    def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return gamma.pdf(x, df / 2, loc, 2 * scale)

    @staticmethod
    def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return gamma.cdf(x, df / 2, loc, 2 * scale)

    @staticmethod
    def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return gamma.logcdf(x, df / 2, loc, 2 * scale)

    @staticmethod
    def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return gamma.sf(x, df / 2, loc, 2 * scale)

    @staticmethod
    def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return gamma.logsf(x, df / 2, loc, 2 * scale)


def _no_betainc(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"chainrule.scipy.stats.beta.{name}: needs the regularized incomplete beta function (betainc), which "
            "chainrule has no derivative rule for; use beta.logpdf / beta.pdf, or scipy.stats.beta on .detach()ed "
            "values")

    refuse.__name__ = name
    return staticmethod(refuse)


class beta:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
        y = _z(x, loc, scale)
        inside = (y >= 0) & (y <= 1)
        y = cnp.where(inside, y, 0.5)
        value = (special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b) - cnp.log(scale))
        return _support(inside, value)

    @staticmethod
    def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(beta.logpdf(x, a, b, loc, scale))

    cdf, logcdf, sf, logsf = (_no_betainc(n) for n in ("cdf", "logcdf", "sf", "logsf"))


class expon:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        y = _z(x, loc, scale)
        return _support(y >= 0, -y - cnp.log(scale))

    @staticmethod
    def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(expon.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return -cnp.expm1(-cnp.maximum(_z(x, loc, scale), 0))

    @staticmethod
    def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.log(expon.cdf(x, loc, scale))

    @staticmethod
    def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(-cnp.maximum(_z(x, loc, scale), 0))

    @staticmethod
    def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return -cnp.maximum(_z(x, loc, scale), 0)

    @staticmethod
    def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return loc - scale * cnp.log1p(-q)


class uniform:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return _support((x >= loc) & (x <= loc + scale), -cnp.log(scale) + 0 * x)

    @staticmethod
    def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(uniform.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.clip(_z(x, loc, scale), 0, 1)

    @staticmethod
    def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return _support((q >= 0) & (q <= 1), loc + q * scale, math.nan)


class pareto:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
        y = _z(x, loc, scale)
        inside = y >= 1
        y = cnp.where(inside, y, 1.0)
        return _support(inside, cnp.log(b) - (b + 1) * cnp.log(y) - cnp.log(scale))

    @staticmethod
    def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(pareto.logpdf(x, b, loc, scale))

    @staticmethod
    def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
        y = _z(x, loc, scale)
        inside = y >= 1
        return _support(inside, -b * cnp.log(cnp.where(inside, y, 1.0)), 0.0)

    @staticmethod
    def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(pareto.logsf(x, b, loc, scale))

    @staticmethod
    def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return -cnp.expm1(pareto.logsf(x, b, loc, scale))

    @staticmethod
    def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.log(pareto.cdf(x, b, loc, scale))

    @staticmethod
    def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return loc + scale * cnp.power(1 - q, -1 / b)


class gumbel_r:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        z = _z(x, loc, scale)
        return -z - cnp.exp(-z) - cnp.log(scale)

    @staticmethod
    def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(gumbel_r.logpdf(x, loc, scale))

    @staticmethod
    def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return -cnp.exp(-_z(x, loc, scale))

    @staticmethod
    def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(gumbel_r.logcdf(x, loc, scale))

    @staticmethod
    def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return -cnp.expm1(gumbel_r.logcdf(x, loc, scale))

    @staticmethod
    def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.log(gumbel_r.sf(x, loc, scale))

    @staticmethod
    def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return loc - scale * cnp.log(-cnp.log(p))


class gumbel_l:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        z = _z(x, loc, scale)
        return z - cnp.exp(z) - cnp.log(scale)

    @staticmethod
    def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(gumbel_l.logpdf(x, loc, scale))

    @staticmethod
    def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return -cnp.exp(_z(x, loc, scale))

    @staticmethod
    def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.exp(gumbel_l.logsf(x, loc, scale))

    @staticmethod
    def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return -cnp.expm1(gumbel_l.logsf(x, loc, scale))

    @staticmethod
    def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return cnp.log(gumbel_l.cdf(x, loc, scale))

    @staticmethod
    def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
        return loc + scale * cnp.log(-cnp.log1p(-p))


class multivariate_normal:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, mean: Any, cov: Any, allow_singular: Any = None) -> Any:
        """The log density of ``x`` (..., d) under N(``mean``, ``cov``): ``cov`` (..., d, d), through its Cholesky
        factor; ``mean`` and ``cov`` may also be scalars (d = 1)."""
        if allow_singular:
            raise NotImplementedError("multivariate_normal.logpdf: allow_singular=True is not supported (as JAX's)")
        if cnp.ndim(cov) < 2:  # a variance (JAX reads a 0-d or 1-d cov as a diagonal) -- one dimension
            return cnp.sum(-0.5 * (x - mean) ** 2 / cov - 0.5 * cnp.log(cov) - 0.5 * _LOG_2PI, axis=-1) \
                if cnp.ndim(cov) == 1 else -0.5 * (x - mean) ** 2 / cov - 0.5 * cnp.log(cov) - 0.5 * _LOG_2PI
        d = cnp.shape(cov)[-1]
        # (the symmetric part: a gradient for both triangles, as JAX's, where the factor reads the lower one)
        chol = cnp.linalg.cholesky((cov + cnp.swapaxes(cov, -1, -2)) / 2)
        diff = x - mean
        y = cnp.linalg.solve(chol, diff[..., None])[..., 0]
        log_det = 2 * cnp.sum(cnp.log(cnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
        return -0.5 * (d * _LOG_2PI + log_det + cnp.sum(y * y, axis=-1))

    @staticmethod
    def pdf(x: Any, mean: Any, cov: Any) -> Any:
        return cnp.exp(multivariate_normal.logpdf(x, mean, cov))


class dirichlet:  # noqa: N801
    @staticmethod
    def logpdf(x: Any, alpha: Any) -> Any:
        """The log density of ``x`` (K, ...), its entries along the first axis, under Dirichlet(``alpha``) (K,)."""
        k = cnp.shape(alpha)[0]
        if cnp.shape(x)[0] not in (k, k - 1):
            raise ValueError(f"dirichlet.logpdf: x must have {k} or {k - 1} entries along its first axis, got shape "
                             f"{cnp.shape(x)}")
        if cnp.shape(x)[0] == k - 1:
            x = cnp.concatenate([x, 1 - cnp.sum(x, axis=0, keepdims=True)], axis=0)
        a = cnp.reshape(alpha, (k,) + (1,) * (cnp.ndim(x) - 1))
        norm = cnp.sum(special.gammaln(alpha)) - special.gammaln(cnp.sum(alpha))
        return cnp.sum(special.xlogy(a - 1, x), axis=0) - norm

    @staticmethod
    def pdf(x: Any, alpha: Any) -> Any:
        return cnp.exp(dirichlet.logpdf(x, alpha))


# ---------------------------------------------------------------- discrete


def _is_count(k: Any) -> Any:
    return (k >= 0) & (k == cnp.floor(k))


class poisson:  # noqa: N801
    @staticmethod
    def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
        k = k - loc
        inside = _is_count(k)
        k = cnp.where(inside, k, 0)
        return _support(inside, special.xlogy(k, mu) - special.gammaln(k + 1) - mu)

    @staticmethod
    def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
        return cnp.exp(poisson.logpmf(k, mu, loc))

    @staticmethod
    def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
        k = cnp.floor(k - loc)
        return _support(k >= 0, special.gammaincc(cnp.maximum(k, 0) + 1, mu), 0.0)


class bernoulli:  # noqa: N801
    @staticmethod
    def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
        k = k - loc
        inside = (k == 0) | (k == 1)
        return _support(inside, special.xlogy(k, p) + special.xlog1py(1 - k, -p))

    @staticmethod
    def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
        return cnp.exp(bernoulli.logpmf(k, p, loc))

    @staticmethod
    def cdf(k: Any, p: Any) -> Any:
        return cnp.where(k < 0, 0.0 * p, cnp.where(k < 1, 1 - p, 1.0 + 0.0 * p))

    @staticmethod
    def ppf(q: Any, p: Any) -> Any:
        value = cnp.where(q > 1 - p, 1.0, 0.0)
        return cnp.where((q >= 0) & (q <= 1), value, math.nan)


class geom:  # noqa: N801
    @staticmethod
    def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
        k = k - loc
        inside = _is_count(k) & (k >= 1)
        k = cnp.where(inside, k, 1)
        return _support(inside, special.xlog1py(k - 1, -p) + cnp.log(p))

    @staticmethod
    def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
        return cnp.exp(geom.logpmf(k, p, loc))


class binom:  # noqa: N801
    @staticmethod
    def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
        k = k - loc
        inside = _is_count(k) & (k <= n)
        k = cnp.where(inside, k, 0)
        comb = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
        return _support(inside, comb + special.xlogy(k, p) + special.xlog1py(n - k, -p))

    @staticmethod
    def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
        return cnp.exp(binom.logpmf(k, n, p, loc))


class nbinom:  # noqa: N801
    @staticmethod
    def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
        k = k - loc
        inside = _is_count(k)
        k = cnp.where(inside, k, 0)
        comb = special.gammaln(n + k) - special.gammaln(k + 1) - special.gammaln(n)
        return _support(inside, comb + special.xlogy(n, p) + special.xlog1py(k, -p))

    @staticmethod
    def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
        return cnp.exp(nbinom.logpmf(k, n, p, loc))


__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "geom", "gumbel_l",
           "gumbel_r", "laplace", "logistic", "multivariate_normal", "nbinom", "pareto", "poisson", "t", "uniform"]
