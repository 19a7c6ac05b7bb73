"""Print the ten held-fixed quiz questions, their answers and the mistakes they diagnose (encoder_core.quiz.table).

python -m scripts.quiz_table
"""

from __future__ import annotations

from encoder_core.quiz.table import fixed_questions, quiz_table


def main() -> None:
    print(quiz_table(fixed_questions()))


if __name__ == "__main__":
    main()
