"""One module per container: line-based text formats, TRL state, TensorBoard, MLflow."""
