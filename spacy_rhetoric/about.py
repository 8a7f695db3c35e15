__title__ = "spacy_rhetoric"
__version__ = "0.6.0"
