"""Open math (task ``embedded-math``): multi-step word problems whose answer the generator computes
exactly (money, percentages, fractions, rates, units, algebra, expressions), the number's equivalent
forms, and the wrong numbers a solver reaches by a slip."""

from __future__ import annotations

import random
from fractions import Fraction

from bertjudge.core.extract import fmt, terminating
from bertjudge.data.corpus.base import ANS, Ctx, Family, Item, money, words
from bertjudge.data.corpus.lexicon import CITIES, COLORS, FIRST_NAMES, INGREDIENTS, OBJECTS, PLACES, VEHICLES


# ----------------------------------------------------------------------------- families
def _math(c, q, value, steps, inter, unit="", alt=(), conv=(), is_money=False, percent_ok=False):
    inter = [Fraction(x) for x in dict.fromkeys(inter) if x != value]
    return Item(
        "open_math",
        q,
        [],
        value=Fraction(value),
        unit=unit,
        alt_units=list(alt),
        conversions=list(conv),
        is_money=is_money,
        percent_ok=percent_ok,
        intermediates=inter,
        steps=steps,
    )


def _price(c):
    return Fraction(c.rng.randint(2, 24), 4)


def _m_shopping(c, phr):
    name = c.pick(FIRST_NAMES)
    (_, o1), (_, o2) = c.sample(OBJECTS, 2)
    n1, n2, p1, p2 = c.rng.randint(2, 9), c.rng.randint(2, 9), _price(c), _price(c)
    cost1, cost2 = n1 * p1, n2 * p2
    total = cost1 + cost2
    bill = next(b for b in (10, 20, 50, 100, 200) if b > total)
    q = phr.format(name=name, n1=n1, o1=o1, n2=n2, o2=o2, p1=money(p1), p2=money(p2), bill=bill, place=c.pick(PLACES))
    steps = [
        f"{n1} {o1} cost {n1} × ${money(p1)} = ${money(cost1)}.",
        f"{n2} {o2} cost {n2} × ${money(p2)} = ${money(cost2)}.",
        f"Together that is ${money(cost1)} + ${money(cost2)} = ${money(total)}.",
        f"The change is ${bill} − ${money(total)} = ${ANS}.",
    ]
    return _math(
        c, q, bill - total, steps, [cost1, cost2, total], "dollars", ["cents"], [(100 * (bill - total), "cents")], True
    )


def _m_discount(c, phr):
    (obj, objs), name = c.pick(OBJECTS), c.pick(FIRST_NAMES)
    price, pct, k = c.rng.randint(8, 120), c.rng.choice([10, 15, 20, 25, 30, 40, 50]), c.rng.randint(2, 6)
    off = Fraction(price * pct, 100)
    sale = price - off
    q = phr.format(obj=obj, objs=objs, price=price, pct=pct, k=k, name=name)
    steps = [
        f"The discount on one {obj} is {pct}% of ${price} = ${money(off)}.",
        f"So one {obj} costs ${price} − ${money(off)} = ${money(sale)}.",
        f"For {k} of them: {k} × ${money(sale)} = ${ANS}.",
    ]
    return _math(
        c, q, k * sale, steps, [off, sale, k * price, k * off], "dollars", ["cents"], [(100 * k * sale, "cents")], True
    )


def _m_travel(c, phr):
    veh = c.pick(VEHICLES)
    v1, t1 = c.rng.randint(4, 18) * 5, Fraction(c.rng.randint(2, 8), 2)
    v2, t2 = c.rng.randint(4, 18) * 5, Fraction(c.rng.randint(1, 6), 2)
    d1, d2 = v1 * t1, v2 * t2
    q = phr.format(veh=veh, v1=v1, t1=fmt(t1), v2=v2, t2=fmt(t2))
    steps = [
        f"First part: {v1} km/h × {fmt(t1)} h = {fmt(d1)} km.",
        f"Second part: {v2} km/h × {fmt(t2)} h = {fmt(d2)} km.",
        f"Total distance: {fmt(d1)} + {fmt(d2)} = {ANS} km.",
    ]
    return _math(
        c, q, d1 + d2, steps, [d1, d2, v1 + v2, t1 + t2], "km", ["miles", "meters"], [(1000 * (d1 + d2), "meters")]
    )


def _m_recipe(c, phr):
    ing, name = c.pick(INGREDIENTS), c.pick(FIRST_NAMES)
    den = c.rng.choice([2, 3, 4, 8])
    per = Fraction(c.rng.randint(1, 2 * den - 1), den)
    while per.denominator == 1:
        per = Fraction(c.rng.randint(1, 2 * den - 1), den)
    batches, extra = c.rng.randint(2, 9), Fraction(c.rng.randint(1, 3), 2)
    used = per * batches
    q = phr.format(ing=ing, name=name, per=f"{per.numerator}/{per.denominator}", batches=batches, extra=fmt(extra))
    steps = [
        f"Each batch uses {per.numerator}/{per.denominator} cup of {ing}.",
        f"{batches} batches use {batches} × {per.numerator}/{per.denominator} = {fmt(used)} cups.",
        f"Adding the extra {fmt(extra)} cup gives {fmt(used)} + {fmt(extra)} = {ANS} cups.",
    ]
    return _math(c, q, used + extra, steps, [used, per], "cups", ["liters", "tablespoons"])


def _m_group(c, phr):
    total = c.rng.choice([20, 25, 40, 50, 60, 80, 120, 200, 400])
    pct = c.rng.choice([p for p in range(5, 100, 5) if total * p % 100 == 0])
    part = total * pct // 100
    group, activity = c.rng.choice(
        [
            ("club", "play chess"),
            ("school", "walk to school"),
            ("orchestra", "play strings"),
            ("office", "work remotely"),
            ("team", "wear glasses"),
            ("class", "have a pet"),
        ]
    )
    q = phr.format(total=total, pct=pct, group=group, activity=activity, place=c.pick(CITIES))
    steps = [f"{pct}% of {total} is {total} × {pct}/100 = {part}.", f"The rest: {total} − {part} = {ANS}."]
    return _math(c, q, total - part, steps, [part, 100 - pct], "people")


def _m_equation(c, phr):
    x = (
        Fraction(c.rng.choice([n for n in range(-12, 21) if n]))
        if c.rng.random() < 0.7
        else Fraction(c.rng.randint(-15, 15), c.rng.choice([2, 4]))
    )
    a, b = c.rng.randint(2, 9), c.rng.choice([n for n in range(-20, 30) if n])
    rhs = a * x + b
    q = phr.format(
        a=a,
        sign="+" if b > 0 else "−",
        verb="adds" if b > 0 else "subtracts",
        b=abs(b),
        rhs=fmt(rhs),
        name=c.pick(FIRST_NAMES),
    )
    moved = rhs - b
    first = (
        f"Subtract {b} from both sides: {a}x = {fmt(rhs)} − {b} = {fmt(moved)}."
        if b > 0
        else f"Add {-b} to both sides: {a}x = {fmt(rhs)} + {-b} = {fmt(moved)}."
    )
    return _math(c, q, x, [first, f"Divide by {a}: x = {fmt(moved)} / {a} = {ANS}."], [moved, rhs, rhs + b])


def _m_expression(c, phr):
    a, b, cc, d = (c.rng.randint(2, 15) for _ in range(4))
    shape = c.rng.randrange(3)
    if shape == 0:
        expr, inner = f"({a} + {b}) × {cc} − {d}", a + b
        steps = [
            f"Inside the parentheses: {a} + {b} = {inner}.",
            f"Multiply: {inner} × {cc} = {inner * cc}.",
            f"Subtract: {inner * cc} − {d} = {ANS}.",
        ]
        value, inter = Fraction(inner * cc - d), [inner, inner * cc]
    elif shape == 1:
        expr = f"{a} − {b} × {cc} + {d}²"
        steps = [
            f"Powers first: {d}² = {d * d}.",
            f"Then multiplication: {b} × {cc} = {b * cc}.",
            f"Finally {a} − {b * cc} + {d * d} = {ANS}.",
        ]
        value, inter = Fraction(a - b * cc + d * d), [d * d, b * cc, a - b * cc]
    else:
        d1, d2 = c.rng.choice([2, 3, 4, 5, 6]), c.rng.choice([3, 4, 7, 8])
        expr, den = f"{a}/{d1} + {b}/{d2}", d1 * d2
        steps = [
            f"Common denominator {den}: {a * d2}/{den} + {b * d1}/{den}.",
            f"Sum: {a * d2 + b * d1}/{den} = {ANS}.",
        ]
        value, inter = Fraction(a, d1) + Fraction(b, d2), [Fraction(a, d1), Fraction(b, d2), Fraction(a + b, d1 + d2)]
    q = phr.format(expr=expr, expr_star=expr.replace("×", "*").replace("−", "-").replace("²", "^2"))
    return _math(c, q, value, steps, [Fraction(x) for x in inter])


def _m_rate(c, phr):
    rate, copies, pages = c.rng.choice([4, 5, 6, 8, 10, 12, 15, 20, 25, 30]), c.rng.randint(2, 12), c.rng.randint(6, 60)
    total = copies * pages
    q = phr.format(rate=rate, copies=copies, pages=pages, name=c.pick(FIRST_NAMES), place=c.pick(PLACES))
    steps = [f"Total pages: {copies} × {pages} = {total}.", f"Time: {total} ÷ {rate} = {ANS} minutes."]
    value = Fraction(total, rate)
    return _math(
        c,
        q,
        value,
        steps,
        [Fraction(total), Fraction(pages, rate)],
        "minutes",
        ["hours", "seconds"],
        [(value * 60, "seconds")],
    )


def _m_rectangle(c, phr):
    length, width, price = c.rng.randint(4, 40), c.rng.randint(3, 25), _price(c) * 2
    perim = 2 * (length + width)
    q = phr.format(l=length, w=width, price=money(price), name=c.pick(FIRST_NAMES))
    steps = [f"Perimeter: 2 × ({length} + {width}) = {perim} m.", f"Cost: {perim} × ${money(price)} = ${ANS}."]
    return _math(
        c,
        q,
        perim * price,
        steps,
        [Fraction(perim), Fraction(length * width), length + width],
        "dollars",
        ["cents"],
        [(100 * perim * price, "cents")],
        True,
    )


def _m_savings(c, phr):
    name, start, weekly, weeks = (
        c.pick(FIRST_NAMES),
        c.rng.randint(0, 20) * 5,
        c.rng.randint(3, 25),
        c.rng.randint(3, 20),
    )
    goal = start + weekly * weeks
    q = phr.format(name=name, start=start, weekly=weekly, goal=goal, obj=c.pick(OBJECTS).singular)
    steps = [
        f"{name} still needs ${goal} − ${start} = ${goal - start}.",
        f"At ${weekly} per week that takes {goal - start} ÷ {weekly} = {ANS} weeks.",
    ]
    return _math(
        c,
        q,
        Fraction(weeks),
        steps,
        [Fraction(goal - start), Fraction(goal)],
        "weeks",
        ["days", "months"],
        [(7 * weeks, "days")],
    )


def _m_average(c, phr):
    name, n = c.pick(FIRST_NAMES), c.rng.randint(3, 5)
    target = c.rng.randint(60, 90)
    scores = [c.rng.randint(55, 100) for _ in range(n)]
    need = target * (n + 1) - sum(scores)
    while not 0 <= need <= 100:
        scores = [c.rng.randint(55, 100) for _ in range(n)]
        need = target * (n + 1) - sum(scores)
    q = phr.format(name=name, scores=", ".join(map(str, scores)), target=target, n1=n + 1)
    steps = [
        f"An average of {target} over {n + 1} tests needs a total of {target} × {n + 1} = {target * (n + 1)} points.",
        f"The first {n} tests give {' + '.join(map(str, scores))} = {sum(scores)}.",
        f"The last test needs {target * (n + 1)} − {sum(scores)} = {ANS} points.",
    ]
    return _math(
        c,
        q,
        Fraction(need),
        steps,
        [Fraction(target * (n + 1)), Fraction(sum(scores)), Fraction(sum(scores), n)],
        "points",
    )


def _m_ratio(c, phr):
    (a_name, b_name) = c.rng.choice(
        [
            ("red marbles", "blue marbles"),
            ("boys", "girls"),
            ("cats", "dogs"),
            ("oak trees", "pine trees"),
            ("fiction books", "nonfiction books"),
        ]
    )
    p, q_ = c.rng.sample(range(1, 10), 2)
    unit = c.rng.randint(2, 15)
    total = (p + q_) * unit
    q = phr.format(a=a_name, b=b_name, p=p, q=q_, total=total, place=c.pick(PLACES))
    steps = [
        f"The ratio has {p} + {q_} = {p + q_} parts.",
        f"Each part is {total} ÷ {p + q_} = {unit}.",
        f"So there are {p} × {unit} = {ANS} {a_name}.",
    ]
    return _math(c, q, Fraction(p * unit), steps, [Fraction(p + q_), Fraction(unit), Fraction(q_ * unit)], a_name)


def _m_probability(c, phr):
    counts = [c.rng.randint(1, 12) for _ in range(3)]
    names = c.sample(COLORS, 3)
    k = c.rng.randrange(3)
    total = sum(counts)
    q = phr.format(
        r=counts[0],
        b=counts[1],
        g=counts[2],
        c1=names[0],
        c2=names[1],
        c3=names[2],
        want=names[k],
        name=c.pick(FIRST_NAMES),
    )
    steps = [
        f"There are {counts[0]} + {counts[1]} + {counts[2]} = {total} in total.",
        f"{counts[k]} of them are {names[k]}, so the probability is {counts[k]}/{total} = {ANS}.",
    ]
    value = Fraction(counts[k], total)
    return _math(
        c,
        q,
        value,
        steps,
        [Fraction(total), Fraction(counts[k]), Fraction(counts[k], total - counts[k])],
        percent_ok=True,
    )


def _m_pieces(c, phr):
    meters = Fraction(c.rng.randint(2, 24), 2)
    piece = c.rng.choice([5, 10, 20, 25, 50])
    while (meters * 100) % piece:
        meters = Fraction(c.rng.randint(2, 24), 2)
    cm = meters * 100
    q = phr.format(
        m=fmt(meters),
        cm=piece,
        name=c.pick(FIRST_NAMES),
        what=c.rng.choice(["ribbon", "rope", "cable", "strip of fabric"]),
    )
    steps = [f"{fmt(meters)} m = {fmt(cm)} cm.", f"Number of pieces: {fmt(cm)} ÷ {piece} = {ANS}."]
    return _math(c, q, cm / piece, steps, [cm, meters / piece], "pieces")


def _m_inventory(c, phr):
    start, sold = c.rng.randint(40, 200), c.rng.randint(5, 30)
    den = c.rng.choice([2, 3, 4, 5])
    rest = start - sold
    while rest % den:
        sold += 1
        rest = start - sold
    given = rest // den
    q = phr.format(place=c.pick(PLACES), start=start, sold=sold, frac=f"1/{den}", objs=c.pick(OBJECTS).plural)
    steps = [
        f"After the morning: {start} − {sold} = {rest}.",
        f"1/{den} of {rest} is {given}.",
        f"Left: {rest} − {given} = {ANS}.",
    ]
    return _math(c, q, Fraction(rest - given), steps, [Fraction(rest), Fraction(given)], "items")


def _m_interest(c, phr):
    principal, rate, years = c.rng.randint(4, 60) * 50, c.rng.choice([2, 3, 4, 5, 6, 8]), c.rng.randint(2, 6)
    yearly = Fraction(principal * rate, 100)
    q = phr.format(p=principal, r=rate, t=years, name=c.pick(FIRST_NAMES))
    steps = [
        f"Interest per year: {rate}% of ${principal} = ${money(yearly)}.",
        f"After {years} years: {years} × ${money(yearly)} = ${money(years * yearly)} of interest.",
        f"Balance: ${principal} + ${money(years * yearly)} = ${ANS}.",
    ]
    value = principal + years * yearly
    return _math(c, q, value, steps, [yearly, years * yearly], "dollars", ["cents"], [(100 * value, "cents")], True)


MATH_FAMILIES = {
    "shopping": Family(
        _m_shopping,
        [
            "{name} buys {n1} {o1} at ${p1} each and {n2} {o2} at ${p2} each, paying with a ${bill} bill. How much change does {name} get?",
            "At the {place}, {o1} cost ${p1} apiece and {o2} cost ${p2} apiece. {name} takes {n1} {o1} and {n2} {o2} and hands over ${bill}. How many dollars should {name} get back?",
            "{name} has a ${bill} note. After buying {n1} {o1} (${p1} each) and {n2} {o2} (${p2} each), how much money is left?",
        ],
    ),
    "discount": Family(
        _m_discount,
        [
            "A {obj} normally costs ${price}. This week it is {pct}% off. How much do {k} of them cost?",
            "{name} wants {k} {objs}. Each is priced at ${price}, and the shop takes {pct}% off every item. What is the total cost in dollars?",
            "The price tag of a {obj} says ${price}, but a {pct}% discount applies at the till. What would {name} pay for {k} {objs}?",
        ],
    ),
    "travel": Family(
        _m_travel,
        [
            "A {veh} travels at {v1} km/h for {t1} hours, then at {v2} km/h for {t2} hours. How many kilometers does it cover in total?",
            "For the first {t1} hours a {veh} averages {v1} kilometers per hour; for the next {t2} hours it averages {v2} kilometers per hour. What total distance does it travel, in km?",
            "A {veh} goes {v1} km each hour for {t1} h and afterwards {v2} km each hour for {t2} h. Find the whole distance in kilometers.",
        ],
    ),
    "recipe": Family(
        _m_recipe,
        [
            "A recipe needs {per} cup of {ing} per batch. {name} makes {batches} batches and then adds {extra} cup of {ing} for decoration. How many cups of {ing} are used?",
            "{name} bakes {batches} batches of cookies. Every batch takes {per} cup of {ing}, and the glaze takes another {extra} cup. How much {ing} is needed altogether, in cups?",
            "Each batch of bread uses {per} cup of {ing}. How many cups does {name} use for {batches} batches plus an extra {extra} cup?",
        ],
    ),
    "group": Family(
        _m_group,
        [
            "In a {group} of {total} people, {pct}% {activity}. How many people do not {activity}?",
            "A {group} in {place} has {total} members. If {pct} percent of them {activity}, how many members don't?",
            "Of the {total} people in a {group}, {pct}% {activity}. How many are left who do not?",
        ],
    ),
    "equation": Family(
        _m_equation,
        [
            "Solve for x: {a}x {sign} {b} = {rhs}.",
            "If {a}x {sign} {b} = {rhs}, what is the value of x?",
            "{name} thinks of a number, multiplies it by {a} and then {verb} {b}, getting {rhs}. What is the number?",
        ],
    ),
    "expression": Family(
        _m_expression,
        [
            "Evaluate {expr}.",
            "What is the value of {expr_star}?",
            "Compute: {expr}",
        ],
    ),
    "rate": Family(
        _m_rate,
        [
            "A printer prints {rate} pages per minute. How many minutes does it take to print {copies} copies of a {pages}-page report?",
            "The {place} printer makes {rate} pages a minute. {name} needs {copies} copies of a {pages}-page booklet. How long will it take, in minutes?",
            "At {rate} pages per minute, how many minutes are needed for {copies} copies of a document with {pages} pages?",
        ],
    ),
    "savings": Family(
        _m_savings,
        [
            "{name} has ${start} and saves ${weekly} every week. After how many weeks will {name} have ${goal}?",
            "{name} wants a {obj} that costs ${goal}. With ${start} already saved and ${weekly} added each week, how many weeks until {name} can buy it?",
            "Starting from ${start}, {name} puts ${weekly} into a jar each week. How many weeks does it take to reach ${goal}?",
        ],
    ),
    "average": Family(
        _m_average,
        [
            "{name}'s test scores so far are {scores}. What score is needed on the next test to average exactly {target} over {n1} tests?",
            "After scoring {scores} on quizzes, {name} wants a mean of {target} across {n1} quizzes. What must the next quiz score be?",
            "Scores: {scores}. Which score on one more test makes the average of all {n1} tests equal {target}?",
        ],
    ),
    "ratio": Family(
        _m_ratio,
        [
            "The ratio of {a} to {b} at the {place} is {p}:{q}. There are {total} in all. How many {a} are there?",
            "{a} and {b} are in the ratio {p} to {q}, and together they number {total}. How many {a}?",
            "A {place} has {total} {a} and {b} combined, in a {p}:{q} ratio. Find the number of {a}.",
        ],
    ),
    "probability": Family(
        _m_probability,
        [
            "A bag contains {r} {c1}, {b} {c2} and {g} {c3} marbles. One marble is drawn at random. What is the probability that it is {want}?",
            "{name} has a jar with {r} {c1} marbles, {b} {c2} marbles and {g} {c3} marbles. If one is picked without looking, what is the chance it is {want}?",
            "There are {r} {c1}, {b} {c2} and {g} {c3} beads in a box. What is the probability of drawing a {want} bead?",
        ],
    ),
    "pieces": Family(
        _m_pieces,
        [
            "A {what} is {m} meters long. {name} cuts it into pieces of {cm} centimeters each. How many pieces are there?",
            "How many {cm} cm pieces can be cut from a {m} m {what}?",
            "{name} has {m} m of {what} and needs strips {cm} cm long. How many strips can be made with nothing left over?",
        ],
    ),
    "inventory": Family(
        _m_inventory,
        [
            "A {place} starts the day with {start} {objs}. It sells {sold} in the morning and gives away {frac} of the rest in the afternoon. How many are left?",
            "There are {start} {objs} at the {place}. After {sold} are sold, {frac} of the remaining ones are donated. How many {objs} remain?",
            "The {place} had {start} {objs}; {sold} were sold, then {frac} of what was left went to charity. How many does it still have?",
        ],
    ),
    "rectangle": Family(
        _m_rectangle,
        [
            "A garden is {l} m long and {w} m wide. Fencing costs ${price} per meter. How much does it cost to fence the whole garden?",
            "{name} wants to put a border around a {l} m by {w} m rectangular yard. The border costs ${price} a meter. What is the total cost?",
            "What does it cost to edge a rectangle of {l} meters by {w} meters with trim at ${price} per meter?",
        ],
    ),
    "interest": Family(
        _m_interest,
        [
            "{name} deposits ${p} in an account paying {r}% simple interest per year. What is the balance after {t} years?",
            "A savings account earns {r}% simple annual interest. If ${p} is deposited, how much is in the account after {t} years?",
            "${p} is invested at {r}% per year simple interest for {t} years. What is the final amount?",
        ],
    ),
}
MATH_INSTRUCTIONS = [
    "",
    "",
    "",
    "Show your work.",
    "Give the final answer as a number.",
    "Put your final answer within \\boxed{}.",
    "Think step by step, and end with 'Final answer: <answer>'.",
    "Answer with a number only.",
]


def math_item(c: Ctx, family: str, idx: int) -> Item:
    """A word problem of a family in its phrasing ``idx``, with an instruction line, references and forms."""
    make, phrasings = MATH_FAMILIES[family]
    item = make(c, phrasings[idx])
    instr = c.rng.choice(MATH_INSTRUCTIONS)
    item.question += f"\n{instr}" if instr else ""
    finish_math(item, c.rng)
    return item


# ----------------------------------------------------------------------------- answers in many forms
def number_forms(item: Item, x: Fraction, correct: bool) -> list[tuple[str, str]]:
    """(form name, text) renderings of the number x in the item's context (money, unit, percent)."""
    out = [("canonical", fmt(x))]
    if x.denominator == 1:
        n = int(x)
        if abs(n) >= 1000:
            out.append(("thousands", f"{n:,}"))
        if 0 <= n < 1000:
            out.append(("words", words(n)))
        out.append(("trailing_zero", f"{n}.00" if item.is_money else f"{n}.0"))
    else:
        p, q = x.numerator, x.denominator
        if terminating(x):
            out.append(("fraction", f"{p}/{q}"))
        out.append(("latex_frac", f"\\frac{{{p}}}{{{q}}}" if p > 0 else f"-\\frac{{{-p}}}{{{q}}}"))
        if abs(x) > 1 and p > 0:
            whole = p // q
            out.append(("mixed", f"{whole} {p - whole * q}/{q}"))
    if item.percent_ok and terminating(x * 100):
        out.append(("percent", f"{fmt(x * 100)}%"))
    if item.is_money:
        out += [("money", f"${money(x)}" if x >= 0 else f"-${money(-x)}"), ("money_words", f"{fmt(x)} dollars")]
    elif item.unit and terminating(x):
        out.append(("unit", f"{fmt(x)} {item.unit}"))
    if correct:
        out += [("converted", f"{fmt(v)} {u}") for v, u in item.conversions]
    return out


def finish_math(item: Item, rng: random.Random) -> None:
    """Set the references and correct forms of a math item from its value."""
    item.forms = number_forms(item, item.value, correct=True)
    ref = fmt(item.value)
    if item.is_money and item.value.denominator != 1 and rng.random() < 0.5:
        ref = money(item.value)
    item.references = [ref]
    extra = [t for name, t in item.forms if name in ("fraction", "latex_frac", "percent", "money", "thousands")]
    if extra and rng.random() < 0.25:
        item.references.append(rng.choice(extra))


def math_wrong(item: Item, kind: str, rng: random.Random) -> Fraction | None:
    v = item.value
    if kind == "off_by_one":
        return v + rng.choice([-1, 1])
    if kind == "sign_error":
        return -v if v else None
    if kind == "intermediate":
        return rng.choice(item.intermediates) if item.intermediates else None
    if kind == "decimal_shift":
        return v * rng.choice([10, Fraction(1, 10)]) if v else None
    if kind == "rounding":
        return None if v.denominator == 1 else Fraction(v.numerator // v.denominator + rng.choice([0, 1]))
    if kind == "slip":
        return v + rng.choice([-1, 1]) * rng.choice([2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 20])
    raise KeyError(kind)
