//! pyo3 bindings (being written).
