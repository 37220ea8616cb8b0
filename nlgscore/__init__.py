"""nlgscore: BERTScore, Prism and BARTScore, exact and fast, for the Hugging Face ecosystem."""

__version__ = "0.1.0"
