__title__ = "spacy_rhetoric"
__version__ = "0.10.0"
