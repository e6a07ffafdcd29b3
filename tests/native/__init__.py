"""Tests of the native judge: convcheck's C kernel, its ABI, build and binding."""
