"""A simulated GPU on the CPU: a model of the CUDA caching allocator (``allocator``) fed by a
dispatch-mode tracker that sees every tensor storage a real script creates (``tracker``)."""
