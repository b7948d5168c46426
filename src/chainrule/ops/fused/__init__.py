"""The fused ops behind the layers: attention, normalizations, convolutions, pooling and interpolation, each
one primitive with hand-written rules (fewer nodes and temporaries than the same layer built from small ops)."""
