__title__ = "spacy_rhetoric"
__version__ = "0.8.0"
