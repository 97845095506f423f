"""Device functions: Numba compiles for the SYCL target, callable only from device code.

A DeviceFunction plays the part Numba expects of a dispatcher (numba-cuda's model): typing a
call compiles the callee for the argument types, registers its lowering with the target
context, and the caller's code library links the callee's.
"""

from __future__ import annotations

import threading

import cloudpickle
from numba.core import errors as numba_errors
from numba.core import sigutils, types, utils
from numba.core.target_extension import (
    dispatcher_registry,
    jit_registry,
)
from numba.core.typeconv import Conversion
from numba.core.typing.templates import AbstractTemplate, fold_arguments
from numba.core.typing.typeof import typeof_impl

from .device_pipeline import compile_device_code
from .diagnostics import compile_failure, current_loc, is_user_error
from .kernel_api.registry import simulated
from .target import SYCLDevice, sycl_target


class _OverloadKey:
    """The hashable key under which one compiled overload's lowering is registered."""

    __slots__ = ("argtypes", "name")

    def __init__(self, name: str, argtypes: tuple):
        self.name, self.argtypes = name, argtypes

    def __repr__(self) -> str:
        return f"{self.name}{self.argtypes}"


class DeviceFunction:
    """A device function: compiled for the argument types of each kernel that calls it.

    ``@dk.func`` makes one. Kernels and other device functions call it like a Python
    function; it is compiled into them. It pickles with the kernels that call it.

    Attributes
    ----------
    py_func : function
        The Python function, which host code can call directly.
    signatures : list
        The tuples of argument types it has been compiled for.

    Raises
    ------
    TypeError
        When called from host code: call ``py_func`` there.

    Examples
    --------
    >>> import dpex_kernels as dk
    >>> @dk.func
    ... def square(x):
    ...     return x * x
    >>> square.py_func(3)
    9
    >>> square(3)
    Traceback (most recent call last):
    ...
    TypeError: device function 'square' can only be called from a @dk.kernel or another ...
    """

    targetdescr = sycl_target
    _cpu_twins: dict[int, DeviceFunction] = {}
    _unpickled_signatures: tuple = ()  # declared, compiled on first use (see __reduce__)

    def __init__(
        self,
        py_func,
        signatures=None,
        *,
        fastmath: bool = False,
        debug: bool = False,
        user_code: bool = True,
    ):
        self.py_func = py_func
        #: False for Numba's own @overload implementations: their failures are the caller's
        #: (np.empty in a kernel), so they reach the caller's compile as Numba raised them.
        self.user_code = user_code
        self.__name__ = getattr(py_func, "__name__", "device_function")
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self.overloads: dict[tuple, object] = {}
        self._keys: dict[tuple, _OverloadKey] = {}
        self.targetoptions = {"fastmath": fastmath, "debug": debug}
        self._lock = threading.RLock()
        self._in_progress: set[tuple] = set()
        self._can_compile = True
        for sig in signatures or ():
            self.compile(sig)
        if signatures:
            self._can_compile = False

    def __repr__(self) -> str:
        return f"<dk.func {self.__name__}>"

    def __call__(self, *args, **kwargs):
        run = simulated("dk.func")  # inside a simulated kernel: its Python function
        if run is not None:
            return run(self, *args, **kwargs)
        raise TypeError(
            f"device function '{self.__name__}' can only be called from a @dk.kernel or "
            f"another @dk.func; to run it on the host, call its .py_func"
        )

    @classmethod
    def for_cpu_dispatcher(cls, dispatcher) -> DeviceFunction:
        """The device twin of a CPU @njit function that a kernel calls."""
        twin = cls._cpu_twins.get(id(dispatcher))
        if twin is None or twin.py_func is not dispatcher.py_func:
            twin = cls(dispatcher.py_func)
            cls._cpu_twins[id(dispatcher)] = twin
        return twin

    def compile(self, sig):
        """Compile the device function for one more signature, ahead of the kernels calling it.

        Parameters
        ----------
        sig : Signature, str or tuple
            A Numba signature (``dk.int64(dk.int64)``), its string (``"int64(int64)"``), or a
            tuple of argument types.

        Returns
        -------
        numba.core.compiler.CompileResult
            Numba's result for it (its ``signature``, the typed IR's library).

        Raises
        ------
        TypeError
            If `sig` is not a signature.
        KernelCompileError
            If the function cannot be compiled for it; the message names the source line.

        Examples
        --------
        >>> import dpex_kernels as dk
        >>> @dk.func
        ... def square(x):
        ...     return x * x
        >>> str(square.compile("float32(float32)").signature)
        '(float32,) -> float32'
        >>> square.signatures
        [(float32,)]
        """
        argtypes, return_type = sigutils.normalize_signature(sig)
        return self._compile(tuple(argtypes), return_type)

    def _compile(self, argtypes: tuple, return_type=None):
        with self._lock:
            existing = self.overloads.get(argtypes)
            if existing is not None:
                return existing
            if argtypes in self._in_progress:
                raise numba_errors.TypingError(
                    f"device function '{self.__name__}' calls itself (recursion), which SYCL "
                    f"devices cannot run: rewrite it as a loop"
                )
            self._in_progress.add(argtypes)
            stale_loc = current_loc()
            try:
                cres = compile_device_code(
                    self.py_func, argtypes, return_type=return_type, **self.targetoptions
                )
            except Exception as exc:
                if not self.user_code:
                    raise
                failure = compile_failure(
                    self.py_func, exc, what="device function", stale_loc=stale_loc
                )
                raise failure from (None if is_user_error(exc) else exc)
            finally:
                self._in_progress.discard(argtypes)
            key = _OverloadKey(self.__name__, argtypes)
            cres.target_context.insert_user_function(key, cres.fndesc, [cres.library])
            self._keys[argtypes] = key
            self.overloads[argtypes] = cres
            return cres

    @property
    def is_compiling(self) -> bool:
        """Numba's recursion detection, off: _compile refuses recursion (devices cannot)."""
        return False

    @property
    def nopython_signatures(self):
        self._compile_unpickled()
        return [cres.signature for cres in self.overloads.values()]

    @property
    def signatures(self):
        """The tuples of argument types the device function is compiled for.

        Returns
        -------
        list
            One tuple of Numba types per compiled signature, in compile order.

        Examples
        --------
        >>> import dpex_kernels as dk
        >>> @dk.func(["int32(int32)", "float64(float64)"])
        ... def twice(x):
        ...     return 2 * x
        >>> twice.signatures
        [(int32,), (float64,)]
        """
        self._compile_unpickled()
        return list(self.overloads)

    def get_call_template(self, args, kws):
        """Numba's hook while typing a caller: compile for `args`, then offer what exists."""
        self._compile_unpickled()
        pysig = utils.pysignature(self.py_func)
        args = tuple(
            fold_arguments(
                pysig,
                args,
                kws,
                lambda index, param, value: value,
                lambda index, param, default: types.Omitted(default),
                lambda index, param, values: types.StarArgTuple(values),
            )
        )
        if self._can_compile:
            self._compile(args)
        template = type(
            f"CallTemplate({self.__name__})",
            (_LosslessCallTemplate,),
            {"key": self.__name__, "cases": self.nopython_signatures},
        )
        return template, pysig, args, {}

    def get_overload(self, args):
        """The key under which the compiled overload's lowering was registered."""
        return self._keys[tuple(args)]

    def __reduce__(self):
        """Pickles as source and options (its compiled state is per process and unpicklable).

        An eager function keeps its declared signatures. Unpickled, nothing compiles until a
        kernel needs it (a kernel that was compiled already launches without), so loading a
        kernel on a Dask worker costs no Numba compile. The device functions it calls travel
        with its source.
        """
        signatures = None
        if not self._can_compile:
            signatures = [*self._unpickled_signatures]
            signatures += [cres.signature for cres in self.overloads.values()]
        return _unpickle_device_function, (
            cloudpickle.dumps(self.py_func),
            signatures,
            self.targetoptions,
        )

    def _compile_unpickled(self) -> None:
        """Compile the declared signatures an unpickled eager function has not compiled yet."""
        if self._unpickled_signatures:
            with self._lock:
                pending, self._unpickled_signatures = self._unpickled_signatures, ()
                for sig in pending:
                    self.compile(sig)


def _unpickle_device_function(py_func: bytes, signatures, options: dict) -> DeviceFunction:
    function = DeviceFunction(cloudpickle.loads(py_func), None, **options)
    if signatures is not None:
        function._can_compile = False
        function._unpickled_signatures = tuple(signatures)
    return function


def _lossless(context, actual, formal) -> bool:
    """Whether a value of type `actual` converts to `formal` without loss.

    A signature compiled for a literal (`f(1)`) has that value folded in: it takes only it.
    """
    if isinstance(formal, types.Literal):
        return actual == formal
    if isinstance(actual, types.IntegerLiteral) and isinstance(formal, types.Integer):
        return formal.minval <= actual.literal_value <= formal.maxval
    conversion = context.can_convert(actual, formal)
    return conversion is not None and conversion <= Conversion.safe


class _LosslessCallTemplate(AbstractTemplate):
    """A call to a device function: the cheapest signature taking every argument losslessly.

    Numba's own resolution would also convert unsafely (an int64 into an int32 parameter
    silently narrows); here that is a compile error naming the function and both types.
    """

    cases: list = []

    def generic(self, args, kws):
        context = self.context
        fitting = [
            sig
            for sig in self.cases
            if len(sig.args) == len(args)
            and all(_lossless(context, a, f) for a, f in zip(args, sig.args))
        ]
        if fitting:
            return min(fitting, key=lambda sig: _conversion_cost(context, args, sig.args))
        declared = ", ".join(str(sig) for sig in self.cases) or "none"
        given = ", ".join(str(a) for a in args)
        raise numba_errors.TypingError(
            f"device function '{self.key}' takes ({given}) with none of its signatures "
            f"without loss (declared: {declared}); convert the argument explicitly (e.g. "
            f"int32(x)) or declare a signature for these types"
        )


def _conversion_cost(context, args, formals) -> int:
    return sum(
        0 if isinstance(a, types.Literal) else int(context.can_convert(a, f))
        for a, f in zip(args, formals)
    )


@typeof_impl.register(DeviceFunction)
def _typeof_device_function(value, context):
    return types.Dispatcher(value)


def _jit_for_overloads(*args, **options):
    """What Numba's @overload machinery calls to compile an implementation for this target."""
    if args and callable(args[0]):
        return DeviceFunction(args[0], user_code=False)
    return lambda py_func: DeviceFunction(py_func, user_code=False)


dispatcher_registry[SYCLDevice] = DeviceFunction
jit_registry[SYCLDevice] = _jit_for_overloads


def func(function_or_signatures=None, /, *, fastmath: bool = False, debug: bool = False):
    """Make a Python function callable from kernels and other device functions.

    Used bare (``@dk.func``), it compiles for the argument types of each call, as part of the
    calling kernel. Given signatures (``@dk.func(sig)``, ``@dk.func([sig1, sig2])``) it
    compiles for those here, and a call must fit one of them without loss: an int64 argument
    never narrows into an int32 parameter silently.

    Parameters
    ----------
    function_or_signatures : function, Signature, str or list, optional
        The Python function (bare form), or the signatures: Numba signatures
        (``dk.int64(dk.int64)``) or their strings (``"int64(int64)"``).
    fastmath : bool, default False
        Numba's fast-math: float arithmetic may be reassociated and fused, assuming no
        NaNs or infinities.
    debug : bool, default False
        Check every array index inside it, as a ``debug=True`` kernel does.

    Returns
    -------
    DeviceFunction or callable
        The device function; when called with signatures or options only, a decorator
        making it.

    Raises
    ------
    TypeError
        If a signature is neither a Numba signature nor its string; and when the device
        function is called from host code.
    KernelCompileError
        With signatures, if the function cannot be compiled for one; from a kernel's compile,
        for a call that fits none of them without loss, for recursion, or for a typing error
        inside the function. The message names the source line.

    Examples
    --------
    >>> import dpnp
    >>> import dpex_kernels as dk
    >>> @dk.func
    ... def clamp(x, low, high):
    ...     return min(max(x, low), high)
    >>> @dk.kernel
    ... def clip(a):
    ...     i = dk.get_global_id(0)
    ...     a[i] = clamp(a[i], 1.0, 2.0)
    >>> a = dpnp.asarray([0.5, 1.5, 2.5])
    >>> clip[3](a).wait()
    >>> dpnp.asnumpy(a)
    array([1. , 1.5, 2. ])
    """
    from numba.core.typing.templates import Signature

    if callable(function_or_signatures) and not isinstance(function_or_signatures, Signature):
        return DeviceFunction(function_or_signatures, fastmath=fastmath, debug=debug)
    signatures = function_or_signatures
    if isinstance(signatures, (str, Signature)):
        signatures = [signatures]

    def decorate(py_func) -> DeviceFunction:
        return DeviceFunction(py_func, signatures, fastmath=fastmath, debug=debug)

    return decorate
