__title__ = "spacy_rhetoric"
__version__ = "0.1.0"
