"""The one table of policy families (engine-seams issue): how a spec string becomes a policy.

A *family* is one kind of decision the controller delegates (cache organisation, destage
order, destage scheduler, contiguity transform, member queue order, prefetch, placement, log
disk). Each row of :data:`FAMILIES` names:

* its ``key``: the CLI flag ``--KEY`` (``_`` as ``-``), the ``vraid.toml`` key, the
  ``vraid ctl`` key and the ``vraid status`` line all come from it;
* a title and a one-line doc, the family's package under ``policies/`` and the base class
  every policy of it subclasses;
* its built-ins, name -> ``"module:Class"`` (imported only when used; ``None`` is the "no
  policy" of families where that means something, e.g. ``--cache none``);
* its default spec, whether ``vraid ctl set`` may swap it at run time, whether it is chosen
  once at ``vraid create`` (``at_create``: recorded in the superblocks, so ``vraid mount`` and
  ``vraid.toml`` do not offer it), and where the engine holds it (``slot``, an attribute path
  on the array) and how to build one (``make``);
* its plain settings (``--cache-size``, ``--log-size``), each with a parameter schema when its
  values are checked here (:func:`setting_value`).

Spec syntax, one parser for every family (:func:`parse`)::

    NAME[:key=value,...]                 a built-in or an installed plugin
    NAME:VALUE                           the same, for a policy with a positional parameter (mcd:2)
    pkg.mod:Class[:key=value,...]        your own class, importable from the current directory
    path/to/file.py:Class[:key=value,...]

Keys and values are checked against the class's parameter schema (:mod:`vraid.policies.params`).
Errors are :class:`~vraid.errors.VraidError` naming family, policy, key and value, with a hint
listing what would be valid, always before anything changes. Installed plugins register in
the entry-point group ``vraid.policies.<key>`` (:mod:`vraid.policies.loader`).

Adding a family: one folder under ``policies/`` with a base class and its built-ins, and one
:class:`Family` row below (docs/policies.md, "What a new family costs", has the exact list).
The CLI flags, vraid.toml keys, ``vraid ctl`` keys, status lines and ``vraid policies``
follow from the row. Where an engine holds each family's policy, which runs and swapping one
at run time (the row's ``slot``) is :mod:`vraid.policies.running`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from vraid.errors import POLICY_ERRORS, VraidError

from . import loader
from .params import Param, ParamError, Size, bind, format_value, schema


@dataclass(frozen=True)
class Context:
    """What a policy may need to be built: never a store, a member or the array itself."""

    #: vraid.core.geometry.Geometry of the array (cache organisations need it)
    geometry: Any = None
    #: the disk model spec of the members (``hdd:st373454lc``), or None for real disks
    disk_model: str | None = None
    #: the superblock's JSON parameters (``params["ct"]`` holds measured CT limits)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: the policy of this family in force now, when one is swapped at run time (keys a CT spec
    #: leaves out keep its limits)
    current: Any = None
    #: the members' disk preset as measured (``vraid.backends.models.disk_preset(disk_model)``),
    #: or None; the CT limits are looked up by it (policies do not import backends)
    disk_preset: str | None = None
    #: the stripe directory a placement runs over (vraid.core.directory): which built-in takes
    #: over from a failed placement depends on it (:func:`fallback`)
    directory: Any = None


@dataclass(frozen=True)
class PolicySpec:
    """A checked spec: family key, policy name (as written), canonical text, the class's
    ``module:Class`` (None for "no policy") and the parameters given, converted."""

    family: str
    name: str
    text: str
    target: str | None = None
    params: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Setting:
    """A plain setting that belongs to a family but is not a policy (``cache_size``)."""

    key: str
    default: str
    doc: str
    metavar: str = "VALUE"
    #: the type and range its values are checked against (:func:`setting_value`); None: unchecked here
    param: Param | None = None


@dataclass(frozen=True)
class Family:
    key: str
    title: str
    doc: str
    package: str
    base: str
    builtins: Mapping[str, str | None]
    default: str
    runtime: bool = False
    #: where the engine holds the policy: an attribute path on the Array (``cache.scheduler``)
    slot: str = ""
    #: the family whose "none" leaves no place for this one (destage needs a cache)
    needs: str | None = None
    #: what the built-in "none" means, for ``vraid policies``
    none_doc: str = ""
    #: ``make(cls, values, spec, ctx)`` builds the policy; default ``cls(**values)``
    make: Callable[..., Any] | None = None
    settings: tuple[Setting, ...] = ()
    #: chosen once at ``vraid create`` and recorded in the superblocks (the log disk): no
    #: ``vraid mount`` flag and no vraid.toml default, a ``vraid create``/``vraid sim`` flag instead
    at_create: bool = False
    #: ``"module:function"``, ``function(failed, ctx)`` -> the spec of the built-in that takes
    #: over from a failed policy (the policy guard asks, :func:`fallback`); None: the family's
    #: default. A string, imported when used, like the built-ins
    fallback: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")

    def base_class(self) -> type:
        return loader.resolve(self.base)

    def names(self) -> list[str]:
        """Built-in names, then installed plugins' names."""
        return [*self.builtins, *(n for n in loader.entry_points(self.key) if n not in self.builtins)]


def _make_cache(cls: type, values: dict, spec: PolicySpec, ctx: Context) -> Any:
    if ctx.geometry is None:
        raise ValueError("a cache organisation needs Context(geometry=...)")
    return cls(ctx.geometry, **values)


def _make_ct(cls: type, values: dict, spec: PolicySpec, ctx: Context) -> Any:
    from vraid.policies.ct import build_transform, default_limits

    base = getattr(ctx.current, "limits", None) or default_limits(dict(ctx.params) or None, disk_preset=ctx.disk_preset)
    return build_transform(cls, dict(spec.params), base)


def _make_queue_order(cls: type, values: dict, spec: PolicySpec, ctx: Context) -> Any:
    from vraid.policies.queue import OrderFactory

    return OrderFactory(cls, **values)


def _make_prefetch(cls: type, values: dict, spec: PolicySpec, ctx: Context) -> Any:
    return cls(ctx.geometry, **values)




FAMILIES: dict[str, Family] = {
    f.key: f
    for f in (
        Family("cache", "cache organisation", "write cache organisation: what one cache unit is (paper 000 (MSC-CT) III-A)",
               "vraid.policies.cache", "vraid.policies.cache:Organisation",
               {"none": None, "pbg": "vraid.policies.cache:PbgOrganisation",
                "stripe": "vraid.policies.cache:StripeOrganisation"},
               "none", slot="cache.organisation", none_doc="no write cache: write-through (the baseline)",
               make=_make_cache, settings=(Setting("cache_size", "64M", "write cache size", "SIZE"),)),
        Family("destage_order", "destage order", "which dirty cache unit is destaged next",
               "vraid.policies.order", "vraid.policies.order:DestageOrder",
               {"lrw": "vraid.policies.order:Lrw", "lru": "vraid.policies.order:Lru",
                "fifo": "vraid.policies.order:Fifo", "cscan": "vraid.policies.order:Cscan"},
               "lrw", runtime=True, slot="cache.order", needs="cache"),
        Family("destage", "destage scheduler", "when to destage and how many destages to keep in flight",
               "vraid.policies.destage", "vraid.policies.destage.base:DestageScheduler",
               {"hlwm": "vraid.policies.destage.hlwm:HlwmScheduler",
                "adaptive": "vraid.policies.destage.adaptive:AdaptiveScheduler",
                "lt": "vraid.policies.destage.lt:LinearThresholdScheduler",
                "pi": "vraid.policies.destage.pi:PiScheduler",
                "idle": "vraid.policies.destage.idle:IdleScheduler"},
               "hlwm", runtime=True, slot="cache.scheduler", needs="cache"),
        Family("ct", "contiguity transform", "rewrites each stripe write's rxw-matrix before it runs (paper 000 (MSC-CT) III-B)",
               "vraid.policies.ct", "vraid.policies.ct.base:ContiguityTransform",
               {"none": None, "msc": "vraid.policies.ct.msc:MscTransform"},
               "none", runtime=True, slot="ct", none_doc="no transform: the basic rxw-matrix runs as planned",
               make=_make_ct),
        Family("queue_order", "member queue order", "order inside each priority class of a member's queue (paper 003 (adaptive HLWM) 3.1)",
               "vraid.policies.queue", "vraid.policies.queue.base:QueueOrder",
               {"fifo": "vraid.policies.queue.fifo:FifoOrder", "clook": "vraid.policies.queue.clook:ClookOrder"},
               "fifo", slot="members.queue_order", make=_make_queue_order),
        Family("prefetch", "prefetch policy", "what else to read into the read cache after a host read (paper 001, SASEQP/MSP)",
               "vraid.policies.prefetch", "vraid.policies.prefetch:PrefetchPolicy",
               {"none": "vraid.policies.prefetch.base:NoPrefetch", "msp": "vraid.policies.prefetch.msp:MspPrefetch",
                "seqp": "vraid.policies.prefetch.seqp:SeqpPrefetch",
                "saseqp": "vraid.policies.prefetch.seqp:SaseqpPrefetch"},
               "none", slot="reads.prefetch", make=_make_prefetch,
               settings=(Setting("read_cache_size", "0", "clean-block read cache size (0: none; a prefetch policy "
                                 "given without one gets 32 stripes of data, 1M to 64M)", "SIZE"),)),
        Family("placement", "placement", "where written blocks go: in place, or new stripes via a stripe directory (paper 004, multibuffering)",
               "vraid.policies.placement", "vraid.policies.placement:Placement",
               {"static": "vraid.policies.placement.static:StaticPlacement",
                "multibuffer": "vraid.policies.placement.multibuffer:MultibufferPlacement",
                "dpsr": "vraid.policies.placement.dpsr:DpsrPlacement"},
               "static", slot="placement", fallback="vraid.policies.placement:fallback_spec"),
        Family("log", "log disk", "a RAM buffer and an append-only log on cache disks in front of the array (paper 002, VC-RAID)",
               "vraid.policies.log", "vraid.policies.log:LogConfiguration",
               {"none": None, "scd": "vraid.policies.log:SingleCacheDisk",
                "mcd": "vraid.policies.log:MultipleCacheDisks",
                "mirrored": "vraid.policies.log:MirroredCacheDisks", "per-disk": "vraid.policies.log:PerDiskLog"},
               "none", slot="log", none_doc="no log disk", at_create=True,
               settings=(Setting("log_size", "16M", "size of each log store (per-disk: of each member's log region)",
                                 "SIZE", Param("log_size", Size, 16 << 20, "bytes of each log store", 132 << 10)),)),
    )
}


def family(key: str) -> Family:
    try:
        return FAMILIES[key]
    except KeyError:
        raise VraidError(f"unknown policy family {key!r}", f"families: {', '.join(FAMILIES)}") from None


def _syntax(fam: Family) -> str:
    return (f"write NAME or NAME:key=value,... with NAME one of {', '.join(fam.names())}, "
            "or your own class as module:Class[:key=value,...] or path/to/file.py:Class[:key=value,...]")


def _split_params(text: str, what: str, params: tuple[Param, ...]) -> dict[str, str]:
    valid = f"valid parameters: {', '.join(p.name for p in params) or '(none)'}"
    given: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq or not key:
            raise VraidError(f"{what}: {item!r} is not key=value", valid)
        if key in given:
            raise VraidError(f"{what}: {key} is given twice", "give each key once")
        given[key] = value
    return given


def _find(fam: Family, text: str) -> tuple[str, str | None, type | None, str]:
    """(name, target, class, rest) for a spec ``text`` of ``fam``; class None for "none"."""
    head, _, rest = text.partition(":")
    head = head.strip()
    title = fam.title
    lowered = head.lower()
    if lowered in fam.builtins:
        target = fam.builtins[lowered]
        what = f"{title} {lowered}"
        if target is None:
            return lowered, None, None, rest
        cls = loader.resolve(target)
        loader.check_class(cls, fam.base_class(), what, target, fam.package)
        return lowered, target, cls, rest
    plugins = loader.entry_points(fam.key)
    if head in plugins:
        ep = plugins[head]
        return head, ep.value, loader.load_entry_point(ep, fam.base_class(), f"{title} {head}"), rest
    cls_name, _, rest = rest.partition(":")
    cls_name = cls_name.strip()
    if not (loader.is_file_target(head) and cls_name.isidentifier()) and not loader.is_module_target(head, cls_name):
        raise VraidError(f"unknown {title} {head!r}", _syntax(fam))
    name = f"{head}:{cls_name}"
    cls = loader.load_class(head, cls_name, fam.base_class(), f"{title} {name}")
    _remember_head(cls, name)
    return name, f"{cls.__module__}:{cls.__qualname__}", cls, rest


def _remember_head(cls: type, head: str) -> None:
    try:
        cls._vraid_head = head  # how the user named the class: a spec re-uses it
    except (AttributeError, TypeError):
        pass


def parse(key: str, text: "str | PolicySpec | None") -> PolicySpec:
    """Check ``text`` (None: the family's default) as a spec of family ``key``.

    Imports the class (a student's module or file, a plugin) to read its parameter schema;
    builds nothing.

    Raises:
        VraidError: for an empty or malformed spec, an unknown name, module, file, class or key,
            a class of the wrong kind, or a bad value.
    """
    if isinstance(text, PolicySpec):
        return text
    fam = family(key)
    spec = fam.default if text is None else str(text).strip()
    if not spec:
        raise VraidError(f"empty {fam.title} spec", _syntax(fam))
    name, target, cls, rest = _find(fam, spec)
    what = f"{fam.title} {name}"
    params = schema(cls) if cls is not None else ()
    if rest.strip() and not params:
        raise VraidError(f"{what} takes no parameters (got {rest.strip()!r})", f"write just {name}")
    if ":" in spec and not rest.strip() and spec.rstrip().endswith(":"):
        raise VraidError(f"{fam.title} spec {spec!r} ends with ':' but gives no parameters",
                         f"write {name} alone, or {name}:key=value,...; valid parameters: "
                         + (", ".join(p.name for p in params) or "(none)"))
    positional = getattr(cls, "positional", None) if cls is not None else None
    if positional and rest.strip() and "=" not in rest and "," not in rest:
        rest = f"{positional}={rest.strip()}"  # mcd:2 is mcd:disks=2
    given = bind(params, _split_params(rest, what, params), what, fill=False)
    if positional and positional not in given:  # written out, so the spec says the default (mcd: mcd:2)
        given = bind(params, {positional: _param(params, positional).default}, what, fill=False) | given
    return PolicySpec(key, name, format_spec(name, given, params, positional=positional), target, tuple(given.items()))


def _param(params: tuple[Param, ...], name: str) -> Param:
    return next(p for p in params if p.name == name)


def format_spec(name: str, values: Mapping[str, Any], params: tuple[Param, ...] = (),
                positional: str | None = None) -> str:
    """``name:k=v,...`` in the canonical spelling :func:`parse` reads back; ``name:VALUE`` when
    the only value given is the class's ``positional`` parameter."""
    types = {p.name: p.type for p in params}
    given = {k: v for k, v in values.items() if v is not None}
    if positional and list(given) == [positional]:
        return f"{name}:{format_value(types.get(positional, type(given[positional])), given[positional])}"
    items = [f"{k}={format_value(types.get(k, type(v)), v)}" for k, v in given.items()]
    return name + (":" + ",".join(items) if items else "")


def policy_class(spec: PolicySpec) -> type | None:
    """The class a checked spec names (None for "none")."""
    return _find(family(spec.family), spec.text)[2]


def create(key: str, spec: "str | PolicySpec | None", ctx: Context | None = None) -> Any:
    """The policy ``spec`` names in family ``key`` (None where the family's "none" means no policy)."""
    fam = family(key)
    spec = parse(key, spec)
    cls = policy_class(spec)
    if cls is None:
        return None
    values = bind(schema(cls), dict(spec.params), f"{fam.title} {spec.name}")
    try:
        obj = (fam.make or (lambda c, v, s, x: c(**v)))(cls, values, spec, ctx or Context())
    except VraidError:
        raise
    except POLICY_ERRORS as exc:  # a student's __init__ (SystemExit included): refused, nothing changes
        if spec.target in fam.builtins.values():
            raise
        raise VraidError(f"{fam.title} {spec.name}: building it failed: {type(exc).__name__}: {exc}",
                         "fix the error in the class's __init__") from exc
    if obj is not None and not isinstance(getattr(type(obj), "spec", None), property):
        try:
            obj._vraid_spec = spec.text
        except (AttributeError, TypeError):
            pass
    return obj


def fallback(key: str, failed: Any, ctx: Context | None = None) -> Any:
    """A fresh instance of the built-in that takes over from ``failed``, a policy of family
    ``key`` the guard disabled: the row's ``fallback`` (placement: the built-in of the stripe
    directory's kind, so it can take over what is buffered), else the family's default."""
    fam, ctx = family(key), ctx or Context()
    return create(key, loader.resolve(fam.fallback)(failed, ctx) if fam.fallback is not None else None, ctx)


def head_of(key: str, cls: type, name: str) -> str:
    """The spec head that names ``cls``: its built-in name, else how the user named it
    (``pkg.mod:Class`` or ``file.py:Class``), else ``module:Class``."""
    target = f"{cls.__module__}:{cls.__qualname__}"
    if family(key).builtins.get(name) == target:
        return name
    return cls.__dict__.get("_vraid_head") or target


def spec_of(obj: Any) -> str:
    """The spec of a running policy object (``none`` for None)."""
    if obj is None:
        return "none"
    spec = getattr(obj, "spec", None)
    if isinstance(spec, str):
        return spec
    return getattr(obj, "_vraid_spec", None) or str(getattr(obj, "name", type(obj).__name__))


# -- settings and flags (what `vraid policies` shows: vraid.policies.describe) -----------------
def settings(*, at_create: bool | None = None) -> dict[str, tuple[str, str]]:
    """Every setting key the table gives (families and their plain settings) -> (default, doc);
    with ``at_create`` False only those a mount may choose (vraid.toml, ``vraid mount``), with
    True only those chosen at ``vraid create``."""
    out: dict[str, tuple[str, str]] = {}
    for fam in FAMILIES.values():
        if at_create is not None and fam.at_create != at_create:
            continue
        out[fam.key] = (fam.default, f"{fam.title}: {', '.join(fam.builtins)} or your own pkg.mod:Class (NAME[:k=v,...])")
        for s in fam.settings:
            out[s.key] = (s.default, s.doc)
    return out


def setting(key: str) -> tuple[Family, Setting]:
    """The family and row of plain setting ``key`` (``log_size``)."""
    for fam in FAMILIES.values():
        for s in fam.settings:
            if s.key == key:
                return fam, s
    raise VraidError(f"unknown setting {key!r}", f"settings: {', '.join(s.key for f in FAMILIES.values() for s in f.settings)}")


def setting_value(key: str, value: Any = None) -> Any:
    """Setting ``key``'s value (text or typed; None: its default) converted and range-checked by
    its schema.

    Raises:
        VraidError: naming the option, the value and the range (``--log-size 0 is below 132K``).
    """
    fam, s = setting(key)
    if s.param is None:
        raise VraidError(f"setting {key} has no schema", "report this as a vraid bug")
    flag = "--" + key.replace("_", "-")
    try:
        return s.param.convert(s.default if value is None else value)
    except ParamError as exc:
        shown = exc.shown if exc.shown is not None else str(value)
        where = s.param.range_text()
        raise VraidError(f"{flag} {shown} {exc.detail}",
                         f"{flag}: {s.doc}, {s.param.kind}{' ' + where if where else ''}, e.g. {flag} {s.default}") from None


def flag_help(key: str) -> str:
    """One line for ``--KEY``'s help: the built-ins, the default, how to add your own."""
    fam = family(key)
    chosen = "; chosen at create, for the array's life" if fam.at_create else ""
    return (f"{fam.title}: {' | '.join(fam.names())} (default {fam.default}), each NAME[:k=v,...], or your own "
            f"pkg.mod:Class or file.py:Class; see `vraid policies {key}`{chosen}")
