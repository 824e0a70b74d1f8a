"""Guarded, lazily initialised access to NVML through the `pynvml` module (nvidia-ml-py).

Every call goes through `NvmlSession.call`: an unsupported field becomes NA, a function missing from
this binding or driver is remembered and skipped, and a GPU that stops answering raises `GpuLostError`
so the caller can mark that one GPU lost while the others go on.
"""

from __future__ import annotations

import threading
import time
from types import ModuleType
from typing import Any, Callable

from pth_top.sensors.na import NA

_ABSENT = object()


class GpuLostError(Exception):
    """The GPU stopped answering (NVMLError_GpuIsLost / NVMLError_Unknown)."""


def _import_pynvml() -> ModuleType | None:
    try:
        import pynvml
    except ImportError:
        return None
    return pynvml


class NvmlSession:
    """One NVML session shared by every reader in this process.

    `module` is the pynvml module, or a scripted fake with the same functions and error classes.
    """

    def __init__(self, module: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._module = module
        self._clock = clock
        self._lock = threading.Lock()
        self._started = False
        self.unavailable_reason: str | None = None
        self.missing_functions: set[str] = set()
        # Function name -> the NVMLError class name of its latest failure, to say why a reading is N/A.
        self.last_error_names: dict[str, str] = {}
        self._cache: dict[tuple[Any, ...], tuple[float, Any]] = {}

    @property
    def module(self) -> Any:
        return self._module

    def start(self) -> bool:
        """Initialise NVML once; False (with `unavailable_reason` set) when there is no usable driver."""
        with self._lock:
            if self._started:
                return self.unavailable_reason is None
            self._started = True
            if self._module is None:
                self._module = _import_pynvml()
            if self._module is None:
                self.unavailable_reason = "no NVIDIA driver (nvidia-ml-py is not installed)"
                return False
            try:
                self._module.nvmlInit()
            except self._module.NVMLError as error:
                self.unavailable_reason = describe_init_error(self._module, error)
                return False
            except OSError as error:
                self.unavailable_reason = f"no NVIDIA driver ({error})"
                return False
            return True

    @property
    def available(self) -> bool:
        return self.start()

    def shutdown(self) -> None:
        with self._lock:
            if self._started and self.unavailable_reason is None and self._module is not None:
                try:
                    self._module.nvmlShutdown()
                except self._module.NVMLError:
                    pass
            self._started = False
            self.unavailable_reason = None
            self._cache.clear()

    def call(self, function_name: str, *args: Any, default: Any = NA) -> Any:
        """Call `pynvml.<function_name>(*args)`; `default` when the GPU or binding cannot answer."""
        if function_name in self.missing_functions:
            return default
        module = self._module
        function = getattr(module, function_name, None)
        if function is None:
            self.missing_functions.add(function_name)
            return default
        try:
            return function(*args)
        except module.NVMLError as error:
            return self._handle_error(module, function_name, error, default)
        except (TypeError, ValueError, AttributeError):
            # The binding's signature differs from what we call it with (version skew): stop calling it.
            self.missing_functions.add(function_name)
            return default

    def call_first(
        self,
        function_names: tuple[str, ...],
        *args: Any,
        default: Any = NA,
        ttl_s: float | None = None,
        accept: Callable[[Any], bool] | None = None,
    ) -> Any:
        """Call the first of `function_names` this binding and driver have (newest variant first).

        `ttl_s` reuses a younger answer as `cached_call` does; a variant whose answer `accept` rejects
        is dropped for good while an older one is left to try.
        """
        for position, function_name in enumerate(function_names):
            if function_name in self.missing_functions:
                continue
            if ttl_s is None:
                value = self.call(function_name, *args, default=_ABSENT)
            else:
                value = self.cached_call(ttl_s, function_name, *args, default=_ABSENT)
            if value is _ABSENT:
                if function_name in self.missing_functions:
                    continue
                return default
            if accept is not None and position < len(function_names) - 1 and not accept(value):
                self.mark_missing(function_name)
                continue
            return value
        return default

    def mark_missing(self, function_name: str) -> None:
        """Stop calling `function_name` (e.g. a variant that answers with garbage on this driver)."""
        self.missing_functions.add(function_name)

    def cached_call(self, ttl_s: float, function_name: str, *args: Any, default: Any = NA) -> Any:
        """Like `call`, but reuse a value younger than `ttl_s` seconds (for slow-changing fields)."""
        key = (function_name, *(id(arg) if _unhashable(arg) else arg for arg in args))
        now = self._clock()
        hit = self._cache.get(key)
        if hit is not None and now - hit[0] < ttl_s:
            value = hit[1]
        else:
            value = self.call(function_name, *args, default=_ABSENT)
            self._cache[key] = (now, value)
        return default if value is _ABSENT else value

    def remember(self, ttl_s: float, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        """`compute()`'s value reused while younger than `ttl_s` (a reading built of many slow-changing calls)."""
        key = ("remember", *(id(part) if _unhashable(part) else part for part in key))
        now = self._clock()
        hit = self._cache.get(key)
        if hit is not None and now - hit[0] < ttl_s:
            return hit[1]
        value = compute()
        self._cache[key] = (now, value)
        return value

    def _handle_error(self, module: Any, function_name: str, error: Exception, default: Any) -> Any:
        self.last_error_names[function_name] = type(error).__name__
        not_found = _error_class(module, "NVMLError_FunctionNotFound")
        if not_found is not None and isinstance(error, not_found):
            self.missing_functions.add(function_name)
            return default
        lost_classes = tuple(
            cls for cls in (
                _error_class(module, "NVMLError_GpuIsLost"),
                _error_class(module, "NVMLError_Unknown"),
            ) if cls is not None
        )
        if lost_classes and isinstance(error, lost_classes):
            raise GpuLostError(f"{function_name}: {error}") from error
        return default


def _error_class(module: Any, name: str) -> type[BaseException] | None:
    cls = getattr(module, name, None)
    return cls if isinstance(cls, type) else None


def _unhashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return True
    return False


def describe_init_error(module: Any, error: Exception) -> str:
    """A one-line reason why NVML could not start."""
    reasons = {
        "NVMLError_LibraryNotFound": "no NVIDIA driver (NVML library not found)",
        "NVMLError_DriverNotLoaded": "no NVIDIA driver (driver not loaded)",
        "NVMLError_LibRmVersionMismatch": (
            "NVIDIA driver/library version mismatch (reload the kernel module or reboot)"
        ),
        "NVMLError_NoPermission": "no permission to use the NVIDIA driver",
    }
    for class_name, reason in reasons.items():
        cls = _error_class(module, class_name)
        if cls is not None and isinstance(error, cls):
            return reason
    return f"NVML unavailable ({error})"
