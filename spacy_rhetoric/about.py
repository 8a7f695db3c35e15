__title__ = "spacy_rhetoric"
__version__ = "0.9.0"
