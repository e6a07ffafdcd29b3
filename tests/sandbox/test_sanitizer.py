"""The sanitizer-report parser on report texts: kind and site, no process involved."""

import pytest

from convcheck.sanitizer import classify, python_fault_site

UBSAN_OVERFLOW = """\
/src/convcheck/native/checks_legacy.c:61:17: runtime error: signed integer overflow: \
9223372036854775807 * 4 cannot be represented in type 'long int'
    #0 0x7f3a2b1c4d5e in step_bias_shape /src/convcheck/native/checks_legacy.c:61
    #1 0x7f3a2b1c5f00 in run_checks /src/convcheck/native/convcheck.c:72
    #2 0x7f3a2c190f79  (/lib/x86_64-linux-gnu/libffi.so.8+0x6f79)
"""

UBSAN_DIVISION = """\
checks_legacy.c:120:22: runtime error: division of -9223372036854775808 by -1 cannot be \
represented in type 'long int'
    #0 0x7f20477792b1 in step_output_sizes /src/checks_legacy.c:120
"""

UBSAN_ZERO = "checks_legacy.c:131:9: runtime error: division by zero\n"

UBSAN_SHIFT = """\
elements.c:55:14: runtime error: shift exponent 64 is too large for 64-bit type 'long int'
    #0 0x55d0c1a3 in float_to_half (/src/libconvcheck-legacy-asan.so+0x1139)
"""

UBSAN_NULL = "conv_loops.c:30:12: runtime error: load of null pointer of type 'const int64_t'\n"

UBSAN_UNKNOWN = "convcheck.c:3:1: runtime error: something new the runtime learnt to say\n"

ASAN_HEAP = """\
=================================================================
==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014 at pc \
0x7f8e4a1b2c3d bp 0x7ffc1a2b3c40 sp 0x7ffc1a2b3c38
READ of size 4 at 0x602000000014 thread T0
    #0 0x7f8e4a1b2c3c in regular_convolution /src/convcheck/native/conv_loops.c:240
    #1 0x7f8e4a1b3f00 in cc_convolution /src/convcheck/native/conv_loops.c:345
    #2 0x7f8e4a1cdf79  (/lib/x86_64-linux-gnu/libffi.so.8+0x6f79)

0x602000000014 is located 0 bytes to the right of 4-byte region [0x602000000010,0x602000000014)
allocated by thread T0 here:
    #0 0x7f7714cb89cf in __interceptor_malloc \
../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7f8e4a1b1000 in cc_convolution /src/convcheck/native/conv_loops.c:336

SUMMARY: AddressSanitizer: heap-buffer-overflow /src/convcheck/native/conv_loops.c:240 in \
regular_convolution
==123==ABORTING
"""

ASAN_NULL_CALL = """\
AddressSanitizer:DEADLYSIGNAL
=================================================================
==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x000000000000 bp \
0x7ffd7e09f400 sp 0x7ffd7e09f398 T0)
==1==Hint: pc points to the zero page.
==1==The signal is caused by a READ memory access.
==1==Hint: address points to the zero page.
    #0 0x0  (<unknown module>)
    #1 0x7f0472787f79 in transposed_convolution /x/conv_loops.c:299

AddressSanitizer can not provide additional info.
SUMMARY: AddressSanitizer: SEGV (<unknown module>)
==1==ABORTING
"""

ASAN_WILD = """\
==9==ERROR: AddressSanitizer: SEGV on unknown address 0x7f0000001000 (pc 0x7f12 bp 0x1 sp 0x2 T0)
==9==The signal is caused by a WRITE memory access.
    #0 0x7f1200001234 in __memset_avx2_unaligned_erms \
../sysdeps/x86_64/multiarch/memset-vec-unaligned-erms.S:328
    #1 0x7f1200005678 in cc_store_value /src/elements.c:200
"""

ASAN_STACK_WRITE = """\
==77==ERROR: AddressSanitizer: stack-buffer-overflow on address 0x7ffd4c2b1a60 at pc \
0x55e1 bp 0x7ffd sp 0x7ffc
WRITE of size 8 at 0x7ffd4c2b1a60 thread T0
    #0 0x55e1a2 in __interceptor_memcpy \
../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:827
    #1 0x55e1b3 in cc_unsqueeze /src/conv_loops.c:90
"""

ASAN_TOO_BIG = """\
==7648==ERROR: AddressSanitizer: requested allocation size 0x80000000 (0x80001000 after \
adjustments for alignment, red zones etc.) exceeds maximum supported size of 0x40000000 (thread T0)
    #0 0x7fad7f8b89cf in __interceptor_malloc \
../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7fad7e9304a8 in cc_convolution /src/conv_loops.c:340

SUMMARY: AddressSanitizer: allocation-size-too-big \
../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69 in __interceptor_malloc
"""

ASAN_OOM = """\
==5==ERROR: AddressSanitizer: allocator is out of memory trying to allocate 0x10000000 bytes
    #0 0x7fad7f8b89cf in __interceptor_calloc \
../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:77
"""

ASAN_RSS = """\
==7967==AddressSanitizer: hard rss limit exhausted (100Mb vs 159Mb)
==7967==Process memory map follows:
"""

ASAN_DOUBLE_FREE = """\
==8==ERROR: AddressSanitizer: attempting double-free on 0x602000000010 in thread T0:
    #0 0x7f in __interceptor_free ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:52
    #1 0x55 in transposed_convolution /src/conv_loops.c:320
"""

ASAN_USE_AFTER_FREE = """\
==8==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020 at pc 0x1 bp 0x2 sp 0x3
READ of size 8 at 0x6020 thread T0
    #0 0x55 in regular_convolution /src/conv_loops.c:262:9
"""

FAULTHANDLER_ONLY = """\
Fatal Python error: Segmentation fault

Current thread 0x00007f0b (most recent call first):
  File "/src/convcheck/native/worker.py", line 52 in handle
"""

# The pooling kernel's own halt (pool_loops.c), after what the request printed before.
WORK_PAST_LIMIT = """\
some output of the library
convcheck: work past limit in halt_if_idle_past_limit /src/pool_loops.c:125: 4295098368 \
taps of each window lie outside the input, and the loops visit them all (limit 4294967296)
"""


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        (WORK_PAST_LIMIT, ("work past limit", "halt_if_idle_past_limit pool_loops.c:125")),
        (UBSAN_OVERFLOW, ("signed-integer-overflow", "step_bias_shape checks_legacy.c:61")),
        (UBSAN_DIVISION, ("signed-integer-overflow", "step_output_sizes checks_legacy.c:120")),
        (UBSAN_ZERO, ("division-by-zero", "checks_legacy.c:131")),
        (UBSAN_SHIFT, ("shift-exponent", "float_to_half elements.c:55")),
        (UBSAN_NULL, ("null-pointer-use", "conv_loops.c:30")),
        (UBSAN_UNKNOWN, ("ubsan", "convcheck.c:3")),
        (ASAN_HEAP, ("heap-buffer-overflow READ", "regular_convolution conv_loops.c:240")),
        (ASAN_NULL_CALL, ("SEGV null", "transposed_convolution conv_loops.c:299")),
        (ASAN_WILD, ("SEGV", "cc_store_value elements.c:200")),
        (ASAN_STACK_WRITE, ("stack-buffer-overflow WRITE", "cc_unsqueeze conv_loops.c:90")),
        (ASAN_TOO_BIG, ("out-of-memory", "cc_convolution conv_loops.c:340")),
        (ASAN_OOM, ("out-of-memory", "")),
        (ASAN_RSS, ("out-of-memory", "")),
        (ASAN_DOUBLE_FREE, ("double-free", "transposed_convolution conv_loops.c:320")),
        (ASAN_USE_AFTER_FREE, ("heap-use-after-free READ", "regular_convolution conv_loops.c:262")),
        # The first report is the one that counts.
        (UBSAN_ZERO + ASAN_HEAP, ("division-by-zero", "checks_legacy.c:131")),
        (FAULTHANDLER_ONLY, None),
        ("", None),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 40 else None,
)
def test_sanitizer_reports_are_classified(report, expected):
    assert classify(report) == expected


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        (FAULTHANDLER_ONLY, "handle worker.py:52"),
        (UBSAN_ZERO, ""),
        ("", ""),
    ],
    ids=["faulthandler", "ubsan", "empty"],
)
def test_python_fault_site_is_the_innermost_python_frame(report, expected):
    assert python_fault_site(report) == expected
