/* declarations only: LLVMFuzzerRunDriver comes from libFuzzer's fuzzer_no_main runtime, linked by make fuzz */
