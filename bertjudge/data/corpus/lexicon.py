"""The word lists and small facts that several categories draw from (names, cities, objects, capitals,
elements ...). In ``train`` only the first four fifths of each list are used; the rest is held out
(see :meth:`bertjudge.data.corpus.base.Ctx.pool`)."""

from __future__ import annotations

from typing import NamedTuple


class Job(NamedTuple):
    title: str
    synonym: str  # shares no word with the title


class Noun(NamedTuple):
    singular: str
    plural: str


class Capital(NamedTuple):
    country: str
    city: str


class Element(NamedTuple):
    name: str
    symbol: str


FIRST_NAMES = (
    "Ava Liam Noah Emma Olivia Mateo Sofia Lucas Amara Kenji Priya Diego Fatima Jonas Chloe Omar "
    "Elena Tariq Hana Mason Leila Ivan Zara Felix Nadia Ruben Maya Theo Ingrid Kofi Mei Pablo Anika "
    "Hugo Yara Emil Rosa Dmitri Sana Victor Alma Tomas Keiko Bruno Lina Marcus Ines Arjun Greta "
    "Samir Clara Jamal Freya Luca Nora Ezra Talia Oscar Wanda Rafael"
).split()
SURNAMES = (
    "Ortiz Nakamura Okafor Lindqvist Moreau Haddad Kowalski Ferreira Brennan Castillo Novak Adeyemi "
    "Petrov Schmidt Rossi Tanaka Mendes Kaur Olsen Dubois Yilmaz Garcia Fischer Bianchi Sato Walsh "
    "Jensen Costa Ivanova Mbeki Larsen Romero Chen Varga Quinn Hale Duarte Sorensen Abara Keller"
).split()
CITIES = (
    "Lyon Porto Krakow Osaka Valencia Leeds Gdansk Quito Tampere Brisbane Halifax Bergen Malmo "
    "Bologna Cusco Dresden Accra Nagoya Ghent Aarhus Seville Cork Tartu Perth Mombasa Salzburg "
    "Austin Utrecht Busan Lille Graz Turin Basel Riga Fresno"
).split()
ORG_HEADS = (
    "Bluefield Northwind Crestline Ironbridge Silverpine Redwater Highmoor Brightleaf Stonegate "
    "Lakeshore Oakridge Sunvale Westbrook Greyhaven Copperfield Eastmere Pinecrest Foxglove "
    "Riverton Ashgrove"
).split()
ORG_TAILS = "Labs Systems Foods Robotics Press Motors Textiles Energy Studios Logistics".split()
TITLE_ADJ = "Silent Hidden Last Crimson Distant Broken Golden Winter Paper Quiet Salt Glass Hollow Burning".split()
TITLE_NOUN = "Harbor Garden Letter River Orchard Lantern Tide Mirror Compass Bridge Meadow Signal Island Clock".split()
AWARDS = (
    "Golden Quill Prize|Aurora Medal|Hartwell Award|Silver Compass Prize|Meridian Medal|"
    "Blue Lantern Award|Keystone Prize|Northern Star Award|Cedar Medal|Iris Prize"
).split("|")
JOBS = [
    Job(*pair)
    for pair in (
        ("doctor", "physician"),
        ("lawyer", "attorney"),
        ("pilot", "aviator"),
        ("journalist", "reporter"),
        ("carpenter", "woodworker"),
        ("chef", "professional cook"),
        ("veterinarian", "animal doctor"),
        ("programmer", "software developer"),
        ("firefighter", "fireman"),
        ("dentist", "dental surgeon"),
        ("mail carrier", "postman"),
        ("police officer", "policeman"),
    )
]
STAFF = "engineers nurses volunteers researchers drivers technicians designers teachers".split()
OBJECTS = [
    Noun(*pair)
    for pair in (
        ("notebook", "notebooks"),
        ("pencil", "pencils"),
        ("apple", "apples"),
        ("muffin", "muffins"),
        ("ticket", "tickets"),
        ("candle", "candles"),
        ("sticker", "stickers"),
        ("marble", "marbles"),
        ("bottle of juice", "bottles of juice"),
        ("pair of socks", "pairs of socks"),
        ("mug", "mugs"),
        ("sandwich", "sandwiches"),
        ("plant pot", "plant pots"),
        ("comic book", "comic books"),
        ("tennis ball", "tennis balls"),
        ("lemon", "lemons"),
        ("postcard", "postcards"),
        ("brush", "brushes"),
        ("loaf of bread", "loaves of bread"),
        ("box of tea", "boxes of tea"),
    )
]
INGREDIENTS = "sugar flour milk oats rice cocoa yogurt water broth cream".split()
VEHICLES = "train bus cyclist truck ferry car drone runner tractor scooter".split()
PLACES = "bakery bookstore farm school library cafe museum garden workshop market".split()
COLORS = "red blue green yellow purple orange white black brown pink grey silver".split()

CAPITALS = [
    Capital(*pair)
    for pair in (
        ("France", "Paris"),
        ("Germany", "Berlin"),
        ("Italy", "Rome"),
        ("Spain", "Madrid"),
        ("Portugal", "Lisbon"),
        ("Japan", "Tokyo"),
        ("Canada", "Ottawa"),
        ("Australia", "Canberra"),
        ("Egypt", "Cairo"),
        ("Kenya", "Nairobi"),
        ("India", "New Delhi"),
        ("China", "Beijing"),
        ("Russia", "Moscow"),
        ("Argentina", "Buenos Aires"),
        ("Peru", "Lima"),
        ("Chile", "Santiago"),
        ("Norway", "Oslo"),
        ("Sweden", "Stockholm"),
        ("Finland", "Helsinki"),
        ("Denmark", "Copenhagen"),
        ("Poland", "Warsaw"),
        ("Greece", "Athens"),
        ("Turkey", "Ankara"),
        ("Ireland", "Dublin"),
        ("Austria", "Vienna"),
        ("Hungary", "Budapest"),
        ("Thailand", "Bangkok"),
        ("Vietnam", "Hanoi"),
        ("South Korea", "Seoul"),
        ("Indonesia", "Jakarta"),
        ("Nigeria", "Abuja"),
        ("Morocco", "Rabat"),
        ("Colombia", "Bogota"),
        ("Cuba", "Havana"),
        ("Iceland", "Reykjavik"),
        ("Belgium", "Brussels"),
        ("Czech Republic", "Prague"),
        ("New Zealand", "Wellington"),
    )
]
ELEMENTS = [
    Element(*pair)
    for pair in (
        ("hydrogen", "H"),
        ("helium", "He"),
        ("carbon", "C"),
        ("nitrogen", "N"),
        ("oxygen", "O"),
        ("sodium", "Na"),
        ("magnesium", "Mg"),
        ("aluminium", "Al"),
        ("silicon", "Si"),
        ("phosphorus", "P"),
        ("sulfur", "S"),
        ("chlorine", "Cl"),
        ("potassium", "K"),
        ("calcium", "Ca"),
        ("iron", "Fe"),
        ("copper", "Cu"),
        ("zinc", "Zn"),
        ("silver", "Ag"),
        ("tin", "Sn"),
        ("gold", "Au"),
        ("mercury", "Hg"),
        ("lead", "Pb"),
        ("neon", "Ne"),
        ("argon", "Ar"),
        ("iodine", "I"),
        ("nickel", "Ni"),
        ("uranium", "U"),
        ("platinum", "Pt"),
    )
]
KINDS_OF = {  # no word belongs to two groups
    "fruit": "apple banana cherry mango pear peach plum grape kiwi apricot".split(),
    "mammal": "horse tiger rabbit whale bat elephant goat fox".split(),
    "bird": "eagle sparrow owl penguin parrot robin swan crow".split(),
    "musical instrument": "violin trumpet flute cello drum harp clarinet oboe".split(),
    "metal": "iron copper zinc nickel titanium tungsten cobalt chromium".split(),
    "vegetable": "carrot spinach potato onion broccoli celery cabbage lettuce".split(),
    "fish": "salmon trout tuna cod herring carp".split(),
    "tool": "hammer wrench chisel saw screwdriver pliers".split(),
    "planet": "Venus Mars Jupiter Saturn Neptune Uranus".split(),
}
ANTONYMS = [
    ("ancient", "modern"),
    ("arrive", "depart"),
    ("accept", "refuse"),
    ("victory", "defeat"),
    ("generous", "stingy"),
    ("expand", "shrink"),
    ("rough", "smooth"),
    ("brave", "cowardly"),
    ("wide", "narrow"),
    ("empty", "full"),
    ("shallow", "deep"),
    ("asleep", "awake"),
    ("increase", "decrease"),
    ("import", "export"),
    ("forget", "remember"),
    ("guilty", "innocent"),
    ("rigid", "flexible"),
    ("sharp", "blunt"),
    ("wet", "dry"),
    ("loud", "quiet"),
    ("ascend", "descend"),
    ("borrow", "lend"),
    ("minimum", "maximum"),
    ("permanent", "temporary"),
    ("vertical", "horizontal"),
    ("include", "exclude"),
]
PLURALS = [
    ("mouse", "mice"),
    ("child", "children"),
    ("goose", "geese"),
    ("foot", "feet"),
    ("tooth", "teeth"),
    ("man", "men"),
    ("woman", "women"),
    ("ox", "oxen"),
    ("leaf", "leaves"),
    ("knife", "knives"),
    ("wolf", "wolves"),
    ("crisis", "crises"),
    ("analysis", "analyses"),
    ("phenomenon", "phenomena"),
    ("criterion", "criteria"),
    ("thesis", "theses"),
]
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = "January February March April May June July August September October November December".split()
