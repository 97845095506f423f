"""Python function + signature -> SPIR-V bytes: target, kernel API, lowering, codegen."""
