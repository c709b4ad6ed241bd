/* declarations only: LLVMFuzzerRunDriver comes from libFuzzer under -sanitize=fuzzer */
