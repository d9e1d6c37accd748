"""Deterministic synthetic retail-banking data shaped exactly like the PKDD'99 (Berka) Czech financial data.

The eight tables and their columns are Berka's, with Berka's encodings: dates are integers YYMMDD (a card's
``issued`` is the text ``"YYMMDD hh:mm:ss"``), ``birth_number`` is YYMMDD with 50 added to the month for
women, and the codes are the original Czech ones:

* ``trans.type``: PRIJEM (credit), VYDAJ (debit), VYBER (a cash withdrawal filed under its own type).
* ``trans.operation``: VKLAD (cash credit), PREVOD Z UCTU (collection from another bank), VYBER (cash
  withdrawal), PREVOD NA UCET (remittance to another bank), VYBER KARTOU (card withdrawal); NULL for the
  bank's own postings (interest).
* ``trans.k_symbol`` / ``order.k_symbol``: POJISTNE (insurance), SLUZBY (statement fee), UROK (interest
  credited), SANKC. UROK (penalty interest on a negative balance), SIPO (household payment), DUCHOD
  (pension), UVER (loan repayment), LEASING (orders only); a single blank ``" "`` or NULL when there is none.
* ``account.frequency``: POPLATEK MESICNE (monthly statement), POPLATEK TYDNE (weekly), POPLATEK PO OBRATU
  (after each transaction).
* ``loan.status``: A finished and paid, B finished and not paid, C running and paid so far, D running with
  the client in debt.

``district`` is Berka's own reference table (77 districts, attributes A1-A16, the two missing values of
district 69 written ``?``). The rest is simulated: accounts are opened 1993-1997 with Berka's yearly and
per-district mix, every account's balance is the running sum of its transactions (interest credited at every
month end), loans follow Berka's durations and amounts and the order of its status mix (a loan's status
follows from its end date and whether its repayments stopped), cards are issued after the account has been
open for half a year, and north Moravia goes through a visible downturn from July 1997 (the Moravian
floods): missed and reduced incomes, falling balances, more negative balances and more loans in trouble.

The demo's shares differ from Berka's where a few hundred accounts would otherwise leave too little to ask
about (Berka's own shares are kept as ``BERKA_*``): 80 % of accounts hold a loan (Berka: 682 of 4,500) and
75 % of accounts a card (Berka: 892 of 4,500); 22 % of finished loans were not paid (Berka: 31 of 234) and
16 % of running loans are in debt (Berka: 45 of 448), north Moravia's loans that run through the downturn
most of all; 9 % of accounts are opened by a 14-16 year old, and most such owners get a junior card, about
half of them before they are 18; now and then a well-filled account sees a cash withdrawal of 30,000 CZK or
more; LEASING standing orders are three times Berka's share; 35 % of the accounts without a loan hold only
test standing orders below 100 CZK, and 4 % of the other orders are such test orders. The status mix keeps
Berka's order (C, then A, far fewer B and D).

Only the standard library is used and one ``random.Random(seed)`` drives every draw in a fixed order, so
the same (scale, seed) always gives byte-identical CSV files. :func:`convert` turns the real files (the
original ``.asc``, csv or parquet) into the same seed CSVs.
"""

from __future__ import annotations

import calendar
import csv
import math
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from dptool.demo.sink import CsvSink, Emit
from dptool.demo.weighted import Weighted, weighted
from dptool.errors import DptoolError

TABLES: tuple[str, ...] = ("account", "client", "disp", "trans", "order", "loan", "card", "district")

COLUMNS: dict[str, tuple[str, ...]] = {
    "account": ("account_id", "district_id", "frequency", "date"),
    "client": ("client_id", "birth_number", "district_id"),
    "disp": ("disp_id", "client_id", "account_id", "type"),
    "trans": ("trans_id", "account_id", "date", "type", "operation", "amount", "balance", "k_symbol", "bank",
              "account"),
    "order": ("order_id", "account_id", "bank_to", "account_to", "amount", "k_symbol"),
    "loan": ("loan_id", "account_id", "date", "amount", "duration", "payments", "status"),
    "card": ("card_id", "disp_id", "type", "issued"),
    "district": tuple(f"A{i}" for i in range(1, 17)),
}

# The seed (CSV) of each table; the staging model keeps the original table name.
SEEDS: dict[str, str] = {t: f"berka_{t}" for t in TABLES}

# Accounts at scale 1.0: with Berka's ~235 transactions per account (a little more with the demo's many
# loan repayments) this keeps trans under 100k rows. Berka itself has 4,500 accounts (scale 12.5).
ACCOUNTS_PER_SCALE = 360

# ---------------------------------------------------------------------------------------------------
# Reference data (Berka's own)
# ---------------------------------------------------------------------------------------------------

# district.asc verbatim (A1..A16): id, name, region, inhabitants, municipalities by size (<500, 500-1999,
# 2000-9999, >=10000), cities, urban ratio %, average salary, unemployment '95 and '96, entrepreneurs per
# 1000 inhabitants, crimes '95 and '96.
_DISTRICTS_ASC = """\
1;Hl.m. Praha;Prague;1204953;0;0;0;1;1;100.0;12541;0.29;0.43;167;85677;99107
2;Benesov;central Bohemia;88884;80;26;6;2;5;46.7;8507;1.67;1.85;132;2159;2674
3;Beroun;central Bohemia;75232;55;26;4;1;5;41.7;8980;1.95;2.21;111;2824;2813
4;Kladno;central Bohemia;149893;63;29;6;2;6;67.4;9753;4.64;5.05;109;5244;5892
5;Kolin;central Bohemia;95616;65;30;4;1;6;51.4;9307;3.85;4.43;118;2616;3040
6;Kutna Hora;central Bohemia;77963;60;23;4;2;4;51.5;8546;2.95;4.02;126;2640;3120
7;Melnik;central Bohemia;94725;38;28;1;3;6;63.4;9920;2.26;2.87;130;4289;4846
8;Mlada Boleslav;central Bohemia;112065;95;19;7;1;8;69.4;11277;1.25;1.44;127;5179;4987
9;Nymburk;central Bohemia;81344;61;23;4;2;6;55.3;8899;3.39;3.97;149;2987;2487
10;Praha - vychod;central Bohemia;92084;55;29;4;3;5;46.7;10124;0.56;0.54;141;3810;4316
11;Praha - zapad;central Bohemia;75637;35;36;9;0;7;36.5;9622;0.45;0.59;154;3475;3529
12;Pribram;central Bohemia;107870;84;29;6;1;6;58.0;8754;3.83;4.31;137;3804;3868
13;Rakovnik;central Bohemia;53921;61;22;1;1;2;41.3;8598;2.77;3.26;123;1597;1875
14;Ceske Budejovice;south Bohemia;177686;69;27;10;1;9;74.8;10045;1.42;1.71;135;6604;6295
15;Cesky Krumlov;south Bohemia;58796;22;16;7;1;5;51.9;9045;3.13;3.60;124;1845;1879
16;Jindrichuv Hradec;south Bohemia;93931;74;21;10;1;8;56.9;8427;1.12;1.54;107;1874;1913
17;Pelhrimov;south Bohemia;74062;99;15;4;2;7;61.4;8114;2.38;2.62;119;1003;1181
18;Pisek;south Bohemia;70699;60;13;2;1;4;65.3;8968;2.83;3.35;131;1740;1910
19;Prachatice;south Bohemia;51428;50;11;3;1;4;52.7;8402;3.13;3.98;120;999;1099
20;Strakonice;south Bohemia;70646;94;14;3;1;4;58.4;8547;2.65;3.64;120;1563;1542
21;Tabor;south Bohemia;103347;87;16;7;1;7;67.0;9104;1.51;2.07;123;2299;2354
22;Domazlice;west Bohemia;58400;65;16;4;1;6;52.4;8620;1.10;1.25;100;1089;1117
23;Cheb;west Bohemia;87419;21;11;4;3;9;85.5;8624;1.79;2.66;102;2879;3198
24;Karlovy Vary;west Bohemia;122603;25;21;6;2;8;80.0;8991;1.39;2.01;128;5198;5273
25;Klatovy;west Bohemia;88757;60;33;3;2;10;61.7;8554;2.47;2.68;113;1822;2218
26;Plzen - mesto;west Bohemia;170449;0;0;0;1;1;100.0;10787;2.64;3.09;131;6041;6261
27;Plzen - jih;west Bohemia;67298;71;19;10;0;7;43.8;8561;0.65;1.29;110;1029;1127
28;Plzen - sever;west Bohemia;72541;66;26;10;0;8;36.9;8594;1.62;2.01;112;1580;1525
29;Rokycany;west Bohemia;45714;52;10;5;1;6;55.6;8843;2.82;3.60;113;818;888
30;Sokolov;west Bohemia;94812;15;13;8;2;10;81.8;9650;3.38;3.67;100;2985;2804
31;Tachov;west Bohemia;51313;34;12;3;1;4;59.2;8930;3.52;4.20;108;1328;1452
32;Ceska Lipa;north Bohemia;105058;32;19;7;2;10;81.0;9272;2.80;3.22;118;4340;4505
33;Decin;north Bohemia;133777;24;17;7;3;11;84.7;8705;5.75;7.61;116;4650;4859
34;Chomutov;north Bohemia;125236;28;11;1;4;5;87.7;9675;6.43;7.68;100;5323;5190
35;Jablonec n. Nisou;north Bohemia;88768;10;18;5;1;7;80.5;8867;1.02;1.21;130;3384;3620
36;Liberec;north Bohemia;159617;29;19;8;1;9;85.2;9198;3.33;4.28;131;5796;6132
37;Litomerice;north Bohemia;114006;71;26;6;2;9;62.3;9065;4.46;5.39;123;4147;4166
38;Louny;north Bohemia;85852;41;23;4;2;4;59.8;8965;7.08;8.23;104;2653;2822
39;Most;north Bohemia;119895;17;4;3;2;4;89.9;10446;7.34;9.40;90;4947;4743
40;Teplice;north Bohemia;128118;9;16;6;3;8;85.3;9317;6.49;7.07;97;6949;6872
41;Usti nad Labem;north Bohemia;118650;8;8;5;1;3;85.6;9832;3.32;4.48;114;6445;5471
42;Havlickuv Brod;east Bohemia;95907;87;25;5;2;7;59.1;8388;2.41;2.94;87;1658;1668
43;Hradec Kralove;east Bohemia;161854;73;21;6;1;6;76.3;9425;1.72;2.50;125;4085;3891
44;Chrudim;east Bohemia;105606;77;26;7;2;7;53.0;8254;2.79;3.76;97;2166;2325
45;Jicin;east Bohemia;77917;85;19;6;1;5;53.5;8390;2.28;2.89;132;2080;2122
46;Nachod;east Bohemia;112709;48;20;7;3;10;73.5;8369;1.79;2.31;117;2854;2618
47;Pardubice;east Bohemia;162580;83;26;5;1;6;72.8;9538;1.51;1.81;111;6079;5410
48;Rychnov nad Kneznou;east Bohemia;78955;50;24;8;1;9;59.0;9060;1.78;2.44;124;1655;1717
49;Semily;east Bohemia;75685;31;28;5;1;9;60.8;8208;1.89;2.26;155;1660;2123
50;Svitavy;east Bohemia;102609;75;33;2;3;6;52.0;8187;4.83;5.45;94;2123;2134
51;Trutnov;east Bohemia;121947;37;28;7;3;11;70.5;8541;2.51;2.97;131;3496;3839
52;Usti nad Orlici;east Bohemia;139012;59;41;8;3;10;61.9;8363;2.52;3.49;108;2564;2799
53;Blansko;south Moravia;107911;88;33;6;2;7;50.9;8240;2.53;3.56;99;1850;1903
54;Brno - mesto;south Moravia;387570;0;0;0;1;1;100.0;9897;1.60;1.96;140;18721;18696
55;Brno - venkov;south Moravia;157042;49;70;18;0;9;33.9;8743;1.88;2.43;111;3659;3894
56;Breclav;south Moravia;124605;11;42;14;1;8;46.0;8772;4.69;4.98;126;2854;3158
57;Hodonin;south Moravia;161954;21;37;20;3;8;48.0;8720;3.73;4.50;116;3729;3651
58;Jihlava;south Moravia;109164;98;16;6;1;4;63.6;8757;3.38;3.95;96;2212;2471
59;Kromeriz;south Moravia;108871;41;29;7;2;6;62.1;8444;3.24;3.47;106;2595;2305
60;Prostejov;south Moravia;110643;49;41;4;1;4;51.9;8441;3.45;4.48;115;1879;2252
61;Trebic;south Moravia;117897;139;28;5;1;6;53.8;8814;4.76;5.74;107;2112;2059
62;Uherske Hradiste;south Moravia;145688;22;41;13;2;5;40.7;8544;1.29;1.86;109;2719;2906
63;Vyskov;south Moravia;86513;38;36;5;1;5;50.5;8288;3.79;4.52;110;1562;1460
64;Zlin;south Moravia;197099;29;41;10;2;10;74.7;9624;1.60;2.31;145;4484;4265
65;Znojmo;south Moravia;114200;101;41;4;1;4;43.7;8403;5.74;5.72;105;2157;2718
66;Zdar nad Sazavou;south Moravia;125832;151;41;2;3;5;48.3;8512;3.51;4.12;102;2247;2103
67;Bruntal;north Moravia;106054;38;25;6;2;6;63.1;8110;5.77;6.55;109;3244;3079
68;Frydek - Mistek;north Moravia;228848;15;40;18;2;6;57.2;9893;4.09;4.72;96;5623;5887
69;Jesenik;north Moravia;42821;4;13;5;1;3;48.4;8173;?;7.01;124;?;1358
70;Karvina;north Moravia;285387;0;2;8;5;7;89.9;10177;6.63;7.75;81;9878;10108
71;Novy Jicin;north Moravia;161227;5;35;11;4;10;69.7;8678;5.93;5.57;102;4980;4595
72;Olomouc;north Moravia;226122;32;50;7;4;4;62.6;8994;3.80;4.79;110;9672;9208
73;Opava;north Moravia;182027;17;49;12;2;7;56.4;8746;3.33;3.74;90;4355;4433
74;Ostrava - mesto;north Moravia;323870;0;0;0;1;1;100.0;10673;4.75;5.44;100;18782;18347
75;Prerov;north Moravia;138032;67;30;4;2;5;64.6;8819;5.38;5.66;99;4063;4505
76;Sumperk;north Moravia;127369;31;32;13;2;7;51.2;8369;4.73;5.88;107;3736;2807
77;Vsetin;north Moravia;148545;8;35;12;3;4;53.5;8909;4.01;5.56;113;3460;3590"""

_DISTRICT_ROWS: tuple[tuple[str, ...], ...] = tuple(tuple(line.split(";")) for line in _DISTRICTS_ASC.splitlines())

# Berka's accounts per district (A1 = 1..77): Prague has 554 of 4,500, Karvina 152, Ostrava 135.
_ACCOUNTS_PER_DISTRICT = (
    554, 42, 50, 48, 65, 48, 44, 56, 46, 48, 48, 42, 37, 41, 50, 52, 42, 46, 55, 36, 48, 36, 50, 42, 42, 45,
    39, 45, 43, 38, 50, 48, 49, 39, 43, 57, 37, 54, 41, 44, 45, 48, 49, 50, 41, 59, 53, 53, 37, 48, 49, 57,
    50, 128, 53, 44, 41, 32, 57, 51, 45, 44, 49, 92, 39, 53, 43, 83, 48, 152, 42, 88, 56, 135, 51, 55, 40,
)
# Berka's clients per year of birth, 1911..1987.
_BIRTHS_FROM = 1911
_BIRTHS_PER_YEAR = (
    2, 1, 3, 4, 4, 3, 5, 45, 47, 55, 42, 46, 59, 46, 56, 36, 50, 56, 41, 54, 56, 52, 55, 57, 69, 69, 66, 71,
    104, 104, 93, 119, 101, 92, 102, 102, 91, 105, 83, 87, 100, 115, 105, 89, 85, 79, 114, 83, 119, 82, 107,
    94, 100, 101, 96, 89, 96, 100, 94, 108, 108, 85, 85, 83, 104, 118, 107, 116, 108, 94, 30, 33, 3, 1, 3, 1,
    1,
)
_ACCOUNTS_PER_YEAR = {1993: 1139, 1994: 439, 1995: 661, 1996: 1363, 1997: 898}
_FREQUENCIES = {"POPLATEK MESICNE": 4167, "POPLATEK TYDNE": 240, "POPLATEK PO OBRATU": 93}
_CARDS_PER_YEAR = {1993: 2, 1994: 42, 1995: 100, 1996: 160, 1997: 260, 1998: 360}
_ORDERS_PER_ACCOUNT = {0: 742, 1: 2103, 2: 949, 3: 416, 4: 228, 5: 62}
# k_symbol of standing orders other than the loan's own repayment (UVER at another bank is rare).
# Berka's counts, but LEASING three times as often (the demo's leasing rule needs some in every region).
_ORDER_SYMBOLS = {"SIPO": 3502, " ": 1379, "POJISTNE": 532, "LEASING": 1023, "UVER": 35}
# (median, sigma) of the lognormal monthly amount of a standing order, fitted to Berka's quartiles.
_ORDER_AMOUNTS = {"SIPO": (3190, 0.75), " ": (1340, 1.3), "POJISTNE": (630, 1.5), "LEASING": (1950, 0.65),
                  "UVER": (4000, 0.6)}
# The k_symbol a standing order's payments carry in trans (Berka has no LEASING there).
_TRANS_SYMBOL = {"SIPO": "SIPO", " ": " ", "POJISTNE": "POJISTNE", "LEASING": " ", "UVER": "UVER"}
_BANKS = ("AB", "CD", "EF", "GH", "IJ", "KL", "MN", "OP", "QR", "ST", "UV", "WX", "YZ")

# Berka's shares (682 loans, 892 cards of 4,500 accounts; 31 of 234 finished loans unpaid, 45 of 448
# running loans in debt). The demo lends and issues cards more often than Berka's bank, and has more loans
# in trouble, so that a few hundred accounts hold enough loans and cards for every region and year to
# have some (see the module docstring).
BERKA_LOAN_SHARE = 682 / 4500
BERKA_CARD_SHARE = 892 / 4500
BERKA_B_SHARE = 31 / 234
BERKA_D_SHARE = 45 / 448
_LOAN_SHARE = 0.8
_CARD_SHARE = 0.75
_DISPONENT_SHARE = 869 / 4500
_YOUNG_OWNER_SHARE = 0.09  # accounts opened by a 14-16 year old (a student account)
_LOAN_DURATIONS = (12, 24, 36, 48, 60)
_B_SHARE = 0.22  # of finished loans: not paid
_D_SHARE = 0.16  # of running loans: client in debt
_CRISIS_RISK = 0.25  # added to the risk of a north Moravia loan running through the downturn
_LARGE_CASH_RATE = 0.05  # a month, for an account with 35,000 CZK to spare
_PLACEHOLDER_SHARE = 0.35  # of accounts without a loan: standing orders all below 100 CZK
_PLACEHOLDER_ORDER = 0.04  # of other standing orders: a test order below 100 CZK
_STATEMENT_FEE = 1460  # SLUZBY, in hellers (14.60 CZK) per statement
_INTEREST_RATE = 0.024  # a year, credited monthly on a positive balance (UROK)
_PENALTY_RATE = 0.12  # a year, charged monthly on a negative balance (SANKC. UROK)

_FIRST = date(1993, 1, 1)
_LAST = date(1998, 12, 31)
_CRISIS_REGION = "north Moravia"
_CRISIS = ((1997, 7), (1998, 6))  # first and last month of the downturn


# ---------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------

def _yymmdd(d: date) -> str:
    return f"{d.year % 100:02d}{d.month:02d}{d.day:02d}"


def _money(hellers: int) -> str:
    """1234 -> '12.34'; exact, signs kept (balances go negative)."""
    sign = "-" if hellers < 0 else ""
    a = abs(hellers)
    return f"{sign}{a // 100}.{a % 100:02d}"


def _month_end(y: int, m: int) -> date:
    return date(y, m, calendar.monthrange(y, m)[1])


def _add_months(y: int, m: int, n: int) -> tuple[int, int]:
    k = y * 12 + (m - 1) + n
    return k // 12, k % 12 + 1


def _months(start: date, end: date = _LAST) -> Iterator[tuple[int, int]]:
    y, m = start.year, start.month
    while (y, m) <= (end.year, end.month):
        yield y, m
        y, m = _add_months(y, m, 1)


def _in_crisis(y: int, m: int) -> bool:
    return _CRISIS[0] <= (y, m) <= _CRISIS[1]


def _quota(n: int, share: float) -> int:
    return int(n * share + 0.5)


def _random_day(rng: random.Random, year: int, first: date = _FIRST, last: date = _LAST) -> date:
    lo, hi = max(first, date(year, 1, 1)), min(last, date(year, 12, 31))
    return lo + timedelta(days=rng.randint(0, (hi - lo).days))


def _lognormal_hellers(rng: random.Random, median: float, sigma: float, lo: float, hi: float, step: float) -> int:
    """A lognormal amount in CZK within [lo, hi] (drawn again when outside), rounded to `step` CZK, in hellers."""
    for _ in range(20):
        x = rng.lognormvariate(math.log(median), sigma)
        if lo <= x <= hi:
            break
    x = min(hi, max(lo, x))
    return int(round(x / step) * step * 100 + 0.5)


@dataclass
class _Order:
    order_id: int
    k_symbol: str
    bank_to: str
    account_to: str
    amount: int  # hellers
    day: int
    start: tuple[int, int]  # first month paid
    stop: tuple[int, int] | None = None  # last month paid (None: to the end)


@dataclass
class _Account:
    account_id: int
    district: int
    frequency: str
    opened: date
    owner_born: int
    pensioner: bool
    income: int  # hellers a month (1993 level)
    income_day: int
    income_channel: str  # VKLAD (cash) or PREVOD Z UCTU (transfer)
    income_bank: str
    income_account: str
    target: float  # the balance the holder keeps, in months of income
    cash_rate: float  # cash withdrawals a month
    owner_disp: int = 0
    loan: dict | None = None
    card_issued: date | None = None
    orders: list[_Order] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------------------------------

def generate(scale: float = 1.0, seed: int = 42) -> dict[str, list[dict]]:
    """Rows per table; scale 1.0 = 360 accounts and about 90,000 transactions (Berka: 12.5).

    Every value is the text written to the CSV (``""`` is NULL), so the rows equal what
    ``csv.DictReader`` reads back from :func:`write_csvs`' files.
    """
    tables: dict[str, list[dict]] = {name: [] for name in TABLES}
    _generate(scale, seed, lambda table, row: tables[table].append(row))
    tables["trans"].sort(key=_trans_order)
    return tables


def _trans_order(row: dict) -> tuple:
    """Transactions are filed by date, then id (ids grow with the account they belong to)."""
    return row["date"], len(row["trans_id"]), row["trans_id"]


def _trans_line_order(line: str) -> tuple:
    """:func:`_trans_order` of a written trans line (trans_id, account_id and date hold no comma or quote)."""
    trans_id, _, day, _ = line.split(",", 3)
    return day, len(trans_id), trans_id


def _generate(scale: float, seed: int, emit: Emit) -> None:
    """Hand every row to `emit(table, row)` as it is drawn: each table's rows in file order, but trans's rows
    account by account (see :func:`_trans_order`)."""
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale!r}")
    rng = random.Random(seed)
    n_accounts = max(1, round(ACCOUNTS_PER_SCALE * scale))
    region = {int(r[0]): r[2] for r in _DISTRICT_ROWS}
    salary = {int(r[0]): int(r[10]) for r in _DISTRICT_ROWS}

    district_pick = Weighted(range(1, 78), _ACCOUNTS_PER_DISTRICT)
    year_pick = weighted(_ACCOUNTS_PER_YEAR)
    frequency_pick = weighted(_FREQUENCIES)
    birth_pick = Weighted(range(_BIRTHS_FROM, _BIRTHS_FROM + len(_BIRTHS_PER_YEAR)), _BIRTHS_PER_YEAR)

    # --- accounts, their owners and disponents (clients and dispositions follow account ids, as in Berka).
    accounts: list[_Account] = []
    account_id, client_id, disp_id = 0, 0, 0
    for _ in range(n_accounts):
        account_id += rng.randint(1, 4)
        district = district_pick.pick(rng)
        opened = _random_day(rng, year_pick.pick(rng), last=date(1997, 12, 29))
        born = birth_pick.pick(rng)
        while born > opened.year - 14:
            born = birth_pick.pick(rng)
        if rng.random() < _YOUNG_OWNER_SHARE:
            born = opened.year - rng.randint(14, 16)
        pensioner = born <= 1936
        if pensioner:
            income = _lognormal_hellers(rng, 5200, 0.18, 2800, 9000, 1)
            channel = "PREVOD Z UCTU"
        else:
            income = _lognormal_hellers(rng, salary[district] * 1.15, 0.42, 3000, 60000, 1)
            channel = "VKLAD" if rng.random() < 0.72 else "PREVOD Z UCTU"
        acc = _Account(
            account_id=account_id, district=district, frequency=frequency_pick.pick(rng), opened=opened,
            owner_born=born, pensioner=pensioner, income=income, income_day=rng.randint(1, 26),
            income_channel=channel, income_bank=rng.choice(_BANKS), income_account=str(rng.randint(10**6, 10**8 - 1)),
            target=min(8.0, rng.lognormvariate(math.log(3.0), 0.55)), cash_rate=rng.uniform(0.45, 1.9),
        )
        accounts.append(acc)

        owner_female = rng.random() < 0.493
        owner_district = district if rng.random() < 0.91 else district_pick.pick(rng)
        client_id += rng.randint(1, 3)
        emit("client", _client(rng, client_id, born, owner_female, owner_district))
        disp_id += rng.randint(1, 3)
        acc.owner_disp = disp_id
        emit("disp", {"disp_id": str(disp_id), "client_id": str(client_id), "account_id": str(account_id),
                          "type": "OWNER"})
        if rng.random() < _DISPONENT_SHARE:
            if rng.random() < 0.85:  # a spouse
                other_born, other_female = min(1980, max(1911, born + rng.randint(-6, 6))), not owner_female
            else:  # a child
                other_born, other_female = min(1987, born + rng.randint(20, 32)), rng.random() < 0.5
            client_id += rng.randint(1, 3)
            emit("client", _client(rng, client_id, other_born, other_female, owner_district))
            disp_id += rng.randint(1, 3)
            emit("disp", {"disp_id": str(disp_id), "client_id": str(client_id), "account_id": str(account_id),
                              "type": "DISPONENT"})

    # --- loans: the demo's share of accounts, granted 102+ days after opening, at most one per account.
    loan_rows = _make_loans(rng, accounts, region)

    # --- cards: the demo's share of accounts, owners only, issued at least 203 days after opening.
    card_rows = _make_cards(rng, accounts)

    # --- standing orders (the loan's repayment is one of them).
    order_rows = _make_orders(rng, accounts)

    # --- transactions, account by account; balances are the running sum.
    trans_id = 0
    for acc in accounts:
        trans_id = max(trans_id, acc.account_id * 293 + rng.randint(0, 40))
        for row in _simulate(rng, acc, region[acc.district] == _CRISIS_REGION):
            trans_id += 1
            row["trans_id"] = str(trans_id)
            emit("trans", row)

    for a in sorted(accounts, key=lambda a: (a.opened, a.account_id)):
        emit("account", {"account_id": str(a.account_id), "district_id": str(a.district), "frequency": a.frequency,
                         "date": _yymmdd(a.opened)})
    for name, rows in (("order", order_rows), ("loan", loan_rows), ("card", card_rows)):
        for row in rows:
            emit(name, row)
    for r in _DISTRICT_ROWS:
        emit("district", dict(zip(COLUMNS["district"], r, strict=True)))


def _client(rng: random.Random, client_id: int, born: int, female: bool, district: int) -> dict:
    month = rng.randint(1, 12)
    day = rng.randint(1, calendar.monthrange(born, month)[1])
    birth_number = f"{born % 100:02d}{month + 50 if female else month:02d}{day:02d}"
    return {"client_id": str(client_id), "birth_number": birth_number, "district_id": str(district)}


def _make_loans(rng: random.Random, accounts: list[_Account], region: dict[int, str]) -> list[dict]:
    eligible = [a for a in accounts if a.opened + timedelta(days=102) <= date(1998, 12, 8)]
    chosen = sorted(rng.sample(eligible, min(len(eligible), _quota(len(accounts), _LOAN_SHARE))),
                    key=lambda a: a.account_id)
    loans = []
    for acc in chosen:
        latest = (date(1998, 12, 8) - acc.opened).days
        delay = min(latest, 102 + int(rng.expovariate(1 / 300)))
        granted = acc.opened + timedelta(days=delay)
        duration = rng.choice(_LOAN_DURATIONS)
        payments = _lognormal_hellers(rng, 4000, 0.55, 304, 9910, 1)
        # The bank lends to people who earn: at least 1.3 times the repayment.
        acc.income = max(acc.income, int(payments * rng.uniform(1.3, 3.0)))
        end_y, end_m = _add_months(granted.year, granted.month, duration)
        finished = (end_y, end_m) <= (1998, 12)
        first = _add_months(granted.year, granted.month, 1)
        crisis_exposed = region[acc.district] == _CRISIS_REGION and first <= _CRISIS[1] and (end_y, end_m) >= _CRISIS[0]
        risk = payments / max(acc.income, 1) + (_CRISIS_RISK if crisis_exposed else 0.0) + rng.gauss(0, 0.18)
        loans.append({"acc": acc, "granted": granted, "duration": duration, "payments": payments,
                      "finished": finished, "risk": risk, "end": (end_y, end_m), "first": first})
    # The demo's status shares, exactly: the riskiest finished loans were not paid (B), the riskiest running
    # loans are in debt (D).
    for finished, bad, good, share in ((True, "B", "A", _B_SHARE), (False, "D", "C", _D_SHARE)):
        group = sorted((ln for ln in loans if ln["finished"] is finished), key=lambda ln: -ln["risk"])
        n_bad = _quota(len(group), share)
        for i, ln in enumerate(group):
            ln["status"] = bad if i < n_bad else good
    rows = []
    loan_id = 4958
    for ln in loans:
        loan_id += rng.randint(1, 6)
        acc = ln["acc"]
        # Repayments: every month after the loan was granted, until it ends; a bad loan's stop early.
        last_paid = ln["end"]
        if ln["status"] == "B":
            last_paid = _add_months(*ln["first"], max(0, int(ln["duration"] * rng.uniform(0.35, 0.85)) - 1))
        elif ln["status"] == "D":
            stop = _add_months(1998, 12, -rng.randint(2, 9))
            if region[acc.district] == _CRISIS_REGION and ln["first"] <= _CRISIS[1]:
                stop = min(stop, _add_months(*_CRISIS[0], rng.randint(0, 5)))
            last_paid = max(_add_months(*ln["first"], -1), stop)
        acc.loan = {"payments": ln["payments"], "first": ln["first"], "last_paid": last_paid,
                    "day": min(ln["granted"].day, 28)}
        rows.append({"loan_id": str(loan_id), "account_id": str(acc.account_id), "date": _yymmdd(ln["granted"]),
                     "amount": str(ln["payments"] * ln["duration"] // 100), "duration": str(ln["duration"]),
                     "payments": _money(ln["payments"]), "status": ln["status"]})
    rows.sort(key=lambda r: (r["date"], int(r["loan_id"])))
    return rows


def _card_earliest(acc: _Account) -> date:
    return max(acc.opened + timedelta(days=203), date(1993, 11, 7))


def _adult_from(acc: _Account) -> date:
    """The first day the owner may already be 18 (1 January of the year they turn 18)."""
    return date(acc.owner_born + 18, 1, 1)


def _make_cards(rng: random.Random, accounts: list[_Account]) -> list[dict]:
    n = min(len(accounts), _quota(len(accounts), _CARD_SHARE))
    # Most owners who could get a card while still a minor get one (a junior card): the demo wants such
    # cards in every year; the rest of the quota is drawn from the other accounts.
    minors = [a for a in accounts if _card_earliest(a) < min(_adult_from(a), date(1998, 12, 29))]
    chosen = [a for a in minors if rng.random() < 0.8][:n]
    taken = {a.account_id for a in chosen}
    chosen += rng.sample([a for a in accounts if a.account_id not in taken], n - len(chosen))
    chosen.sort(key=lambda a: a.account_id)
    year_pick = weighted(_CARDS_PER_YEAR)
    rows = []
    card_id = 0
    for acc in chosen:
        card_id += rng.randint(1, 2)
        earliest = _card_earliest(acc)
        issued = None
        last_minor = min(_adult_from(acc), date(1998, 12, 30)) - timedelta(days=1)
        if earliest <= last_minor and rng.random() < 0.5:  # issued while the owner is under 18
            issued = earliest + timedelta(days=rng.randint(0, (last_minor - earliest).days))
        for _ in range(0 if issued else 20):
            candidate = _random_day(rng, year_pick.pick(rng), last=date(1998, 12, 29))
            if candidate >= earliest:
                issued = candidate
                break
        if issued is None:
            issued = earliest + timedelta(days=rng.randint(0, (date(1998, 12, 29) - earliest).days))
        acc.card_issued = issued
        if acc.owner_born >= 1974:
            kind = "junior"
        elif rng.random() < 0.118 * (1.6 if acc.income > 1_500_000 else 0.8):
            kind = "gold"
        else:
            kind = "classic"
        rows.append({"card_id": str(card_id), "disp_id": str(acc.owner_disp), "type": kind,
                     "issued": f"{_yymmdd(issued)} 00:00:00"})
    rows.sort(key=lambda r: (r["issued"], int(r["card_id"])))
    return rows


def _make_orders(rng: random.Random, accounts: list[_Account]) -> list[dict]:
    count_pick = weighted(_ORDERS_PER_ACCOUNT)
    symbol_pick = weighted(_ORDER_SYMBOLS)
    rows = []
    order_id = 29400
    for acc in accounts:
        n = count_pick.pick(rng)
        symbols = []
        if acc.loan is not None:
            n = max(1, n)
            symbols.append("UVER")
        while len(symbols) < n:
            s = symbol_pick.pick(rng)
            if s != "UVER" or acc.loan is None:
                symbols.append(s)
        # What the standing orders take stays within what the income allows beside the loan repayment.
        loan_share = acc.loan["payments"] / acc.income if acc.loan is not None else 0.0
        budget = max(0.1, 0.8 - loan_share) * acc.income * rng.uniform(0.6, 1.0)
        # A few accounts without a loan hold only test orders of a few crowns (never validated).
        placeholders = acc.loan is None and rng.random() < _PLACEHOLDER_SHARE
        for s in symbols:
            order_id += rng.randint(1, 4)
            if s == "UVER" and acc.loan is not None:
                amount = acc.loan["payments"]
                start, stop, day = acc.loan["first"], acc.loan["last_paid"], acc.loan["day"]
            else:
                median, sigma = _ORDER_AMOUNTS[s]
                amount = _lognormal_hellers(rng, median, sigma, 1, 14900, 0.1)
                if placeholders or rng.random() < _PLACEHOLDER_ORDER:
                    amount = 100 * rng.randint(10, 99)
                elif amount > budget / len(symbols):
                    amount = max(100, int(budget / len(symbols) * rng.uniform(0.5, 1.0)) // 10 * 10)
                start = _add_months(acc.opened.year, acc.opened.month, rng.randint(0, 14))
                stop, day = None, rng.randint(1, 28)
            order = _Order(order_id, s, rng.choice(_BANKS), str(rng.randint(1000, 99_999_999)), amount, day,
                           start, stop)
            acc.orders.append(order)
            rows.append({"order_id": str(order_id), "account_id": str(acc.account_id), "bank_to": order.bank_to,
                         "account_to": order.account_to, "amount": _money(amount), "k_symbol": s})
    return rows


def _simulate(rng: random.Random, acc: _Account, crisis_region: bool) -> list[dict]:
    """The account's transactions in time order, each with the balance after it."""
    rows: list[dict] = []
    balance = 0

    account_id = str(acc.account_id)

    def post(yymmdd: str, kind: str, operation: str, amount: int, k_symbol: str = "", bank: str = "",
             account: str = "") -> None:
        nonlocal balance
        balance += amount if kind == "PRIJEM" else -amount
        rows.append({"trans_id": "", "account_id": account_id, "date": yymmdd, "type": kind, "operation": operation,
                     "amount": _money(amount), "balance": _money(balance), "k_symbol": k_symbol, "bank": bank,
                     "account": account})

    # The first deposit, on the day the account is opened.
    post(_yymmdd(acc.opened), "PRIJEM", "VKLAD", 100_00 * rng.randint(2, 11))
    weekly = acc.frequency == "POPLATEK TYDNE"
    per_turnover = acc.frequency == "POPLATEK PO OBRATU"
    for y, m in _months(acc.opened):
        first_day = acc.opened + timedelta(days=1) if (y, m) == (acc.opened.year, acc.opened.month) \
            else date(y, m, 1)
        end = _month_end(y, m)
        if first_day > end:
            first_day = end
        growth = 1.07 ** ((y - 1993) + (m - 1) / 12)
        crisis = crisis_region and _in_crisis(y, m)
        events: list[tuple[int, int, tuple]] = []  # (day, order within the day, posting)
        lo, hi = first_day.day, end.day

        # Income: pension or salary (cash deposits vary more than transfers); the downturn cuts it.
        expected = int(acc.income * growth)
        income = expected
        if crisis and not acc.pensioner:
            income = 0 if rng.random() < 0.3 else int(income * rng.uniform(0.55, 0.85))
        if income:
            if acc.income_channel == "VKLAD":
                amount = int(round(income * rng.uniform(0.85, 1.15), -2))
                day = acc.income_day + rng.randint(-2, 2)
                _on(events, lo, hi, day, 0, ("PRIJEM", "VKLAD", amount, "", "", ""))
            else:
                amount = int(income * rng.uniform(0.98, 1.02))
                symbol = "DUCHOD" if acc.pensioner else ""
                posting = ("PRIJEM", "PREVOD Z UCTU", amount, symbol, acc.income_bank, acc.income_account)
                _on(events, lo, hi, acc.income_day, 0, posting)
        if rng.random() < 0.22:  # an occasional extra cash deposit
            day, amount = rng.randint(1, 28), 100_00 * max(1, int(rng.lognormvariate(3.0, 1.0)))
            _on(events, lo, hi, day, 0, ("PRIJEM", "VKLAD", amount, "", "", ""))

        # Standing orders, the loan repayment among them.
        fixed = 0
        for o in acc.orders:
            if (y, m) >= o.start and (o.stop is None or (y, m) <= o.stop):
                posting = ("VYDAJ", "PREVOD NA UCET", o.amount, _TRANS_SYMBOL[o.k_symbol], o.bank_to, o.account_to)
                _on(events, lo, hi, o.day, 1, posting)
                fixed += o.amount
        if rng.random() < 0.08:  # a one-off remittance
            day, amount = rng.randint(1, 28), 100 * int(rng.lognormvariate(7.5, 0.9))
            posting = ("VYDAJ", "PREVOD NA UCET", amount, "", rng.choice(_BANKS), str(rng.randint(10**6, 10**8 - 1)))
            _on(events, lo, hi, day, 1, posting)

        # Spending: part of the income plus most of what is above the balance the holder keeps, in cash (and
        # by card, once issued), never more than there is; in the downturn people spend as if paid in full.
        keep = acc.target * expected
        available = balance + expected - fixed
        spend = 0.0
        if available > 0:
            spend = expected * rng.uniform(0.3, 0.55) + max(0.0, available - keep) * rng.uniform(0.55, 0.95)
            spend = min(spend, available * (1.15 if crisis else 1.0))
        n_cash = _poisson(rng, acc.cash_rate)
        has_card = acc.card_issued is not None and acc.card_issued <= end
        n_card = _poisson(rng, 0.7) if has_card else 0
        n_out = n_cash + n_card
        if spend >= 100_00 and n_out == 0:
            n_cash = n_out = 1
        for i in range(n_out):
            amount = int(round(spend / n_out * rng.uniform(0.6, 1.4), -4))
            if amount < 100_00:
                continue
            if i < n_cash:
                kind = "VYBER" if rng.random() < 0.06 else "VYDAJ"
                _on(events, lo, hi, rng.randint(1, hi), 1, (kind, "VYBER", amount, "", "", ""))
            else:
                card_from = acc.card_issued.day if acc.card_issued >= date(y, m, 1) else 1
                posting = ("VYDAJ", "VYBER KARTOU", min(amount, 20000_00), "", "", "")
                _on(events, lo, hi, rng.randint(card_from, hi), 1, posting)

        # Now and then a large cash withdrawal (a car, a flat's deposit) from a well-filled account.
        room = available - spend
        if room >= 35_000_00 and rng.random() < _LARGE_CASH_RATE:
            amount = int(round(rng.uniform(30_000_00, min(room, 90_000_00)), -4))
            _on(events, lo, hi, rng.randint(1, hi), 1, ("VYBER", "VYBER", amount, "", "", ""))

        events.sort(key=lambda e: (e[0], e[1]))
        turnover = len(events)
        prefix = f"{y % 100:02d}{m:02d}"
        for day, _prio, (kind, operation, amount, symbol, bank, account) in events:
            post(f"{prefix}{day:02d}", kind, operation, amount, symbol, bank, account)
        month_end = f"{prefix}{hi:02d}"

        # Month end: interest on a positive balance, penalty interest on a negative one, the statement fee.
        if end >= first_day:
            if balance > 0:
                interest = int(round(balance * _INTEREST_RATE / 12, -1))
                if interest > 0:
                    post(month_end, "PRIJEM", "", interest, "UROK")
            elif balance < 0:
                penalty = max(10, int(round(-balance * _PENALTY_RATE / 12, -1)))
                post(month_end, "VYDAJ", "VYBER", penalty, "SANKC. UROK")
            if (y, m) != (acc.opened.year, acc.opened.month) and (not per_turnover or turnover):
                statements = sum(1 for d in range(1, end.day + 1) if date(y, m, d).weekday() == 6) if weekly else 1
                post(month_end, "VYDAJ", "VYBER", _STATEMENT_FEE * statements, "SLUZBY")
    return rows


def _on(events: list, lo: int, hi: int, day: int, prio: int, posting: tuple) -> None:
    """Schedule a posting on a day of the month (clipped to the month; nothing before the account opened)."""
    day = min(max(day, 1), hi)
    if day >= lo:
        events.append((day, prio, posting))


def _poisson(rng: random.Random, lam: float) -> int:
    """Knuth's method (small lambdas only)."""
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def write_csvs(out_dir: str | Path, scale: float = 1.0, seed: int = 42) -> dict[str, int]:
    """Write one CSV per table as ``berka_<table>.csv`` (header row, UTF-8, '\\n' line endings, minimal quoting).

    Returns the row count per table.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {name: (f"{SEEDS[name]}.csv", COLUMNS[name]) for name in TABLES}
    # trans spills month by month ("9301".."9812"): a month's lines are sorted alone.
    with CsvSink(out, files, buckets={"trans": (lambda row: row["date"][:4], _trans_line_order)}) as sink:
        _generate(scale, seed, sink.emit)
    return sink.counts


def _write(path: Path, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> int:
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(columns)
        for row in rows:
            writer.writerow(row)
            n += 1
    return n


# ---------------------------------------------------------------------------------------------------
# The real files -> the same seed CSVs
# ---------------------------------------------------------------------------------------------------

_DATE_COLUMNS = {("account", "date"), ("loan", "date"), ("trans", "date")}
# Berka writes these with a fixed number of decimals (loan.amount is a whole number of CZK).
_DECIMALS = {("trans", "amount"): 2, ("trans", "balance"): 2, ("order", "amount"): 2, ("loan", "payments"): 2,
             ("district", "A10"): 1, ("district", "A13"): 2}
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2}))?")


class BerkaFormatError(DptoolError):
    """A source folder or file that is not Berka's (a missing table, missing columns, short rows)."""


def source_files(src_dir: str | Path) -> dict[str, Path]:
    """The file of each table in `src_dir`.

    Looks for ``<table>.asc``, ``<table>.csv``, ``<table>.parquet``, then ``berka_<table>.csv`` (the seeds
    themselves), then a single ``<table>_*`` file of those types (e.g. ``trans_SAMPLE_100rows.asc``).
    """
    src = Path(src_dir)
    if not src.is_dir():
        raise BerkaFormatError(f"{src}: not a folder")
    found: dict[str, Path] = {}
    missing = []
    for table in TABLES:
        candidates = [src / f"{table}.{ext}" for ext in ("asc", "csv", "parquet")] + [src / f"{SEEDS[table]}.csv"]
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            others = sorted(p for ext in ("asc", "csv", "parquet") for p in src.glob(f"{table}_*.{ext}"))
            if len(others) == 1:
                path = others[0]
        if path is None:
            missing.append(table)
        else:
            found[table] = path
    if missing:
        raise BerkaFormatError(f"{src}: no file for table(s) {', '.join(missing)} "
                               f"(looked for <table>.asc, <table>.csv, <table>.parquet, berka_<table>.csv)")
    return found


def convert(src_dir: str | Path, out_dir: str | Path) -> dict[str, int]:
    """Convert Berka's real files into the seed CSVs that :func:`write_csvs` writes.

    Reads the original ``.asc`` files (semicolon-separated, quoted), csv (comma- or semicolon-separated) or
    parquet (through duckdb), keeps Berka's values and encodings (YYMMDD integers, blank ``" "`` codes,
    ``?`` in district A12/A15), writes the columns in Berka's order and returns the row count per table.
    ISO dates (``1993-01-01``), if a source has them, are written back in Berka's encoding.
    """
    files = source_files(src_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # Each table goes to a hidden temp file first: a bad source leaves the seed folder as it was.
    temps = {table: out / f".{SEEDS[table]}.csv.tmp" for table in TABLES}
    counts = {}
    try:
        for table in TABLES:
            path = files[table]
            rows = _read_parquet(path, table) if path.suffix == ".parquet" else _read_text(path, table)
            counts[table] = _write(temps[table], COLUMNS[table], rows)
        for table in TABLES:
            temps[table].replace(out / f"{SEEDS[table]}.csv")
    finally:
        for temp in temps.values():
            temp.unlink(missing_ok=True)
    return counts


def _column_positions(path: Path, table: str, header: Sequence[str]) -> list[int]:
    names = [h.strip().strip('"').lower() for h in header]
    positions, missing = [], []
    for column in COLUMNS[table]:
        if column.lower() in names:
            positions.append(names.index(column.lower()))
        else:
            missing.append(column)
    if missing:
        raise BerkaFormatError(f"{path}: not Berka's {table} table, columns {', '.join(missing)} are missing "
                               f"(found {', '.join(header)})")
    return positions


def _read_text(path: Path, table: str) -> Iterator[list[str]]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1250")
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") >= first.count(",") else ","
    reader = csv.reader(text.splitlines(), delimiter=delimiter, quotechar='"')
    header = next(reader, None)
    if header is None:
        raise BerkaFormatError(f"{path}: empty file")
    positions = _column_positions(path, table, header)
    for line_no, record in enumerate(reader, start=2):
        if not record:
            continue
        if len(record) < len(header):
            raise BerkaFormatError(f"{path}:{line_no}: {len(record)} fields, the header has {len(header)}")
        yield [_normalize(table, c, record[p]) for c, p in zip(COLUMNS[table], positions, strict=True)]


def _read_parquet(path: Path, table: str) -> Iterator[list[str]]:
    import duckdb

    con = duckdb.connect()
    try:
        cur = con.execute("select * from read_parquet(?)", [str(path)])
        header = [d[0] for d in cur.description]
        positions = _column_positions(path, table, header)
        while batch := cur.fetchmany(10_000):
            for record in batch:
                yield [_normalize(table, c, _text(table, c, record[p]))
                       for c, p in zip(COLUMNS[table], positions, strict=True)]
    finally:
        con.close()


def _text(table: str, column: str, value) -> str:
    """A parquet value as Berka's text."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%y%m%d %H:%M:%S") if (table, column) == ("card", "issued") else _yymmdd(value)
    if isinstance(value, date):
        return _yymmdd(value)
    if isinstance(value, float):
        if (table, column) in _DECIMALS:
            return f"{value:.{_DECIMALS[table, column]}f}"
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, int) and (table, column) == ("client", "birth_number"):
        return f"{value:06d}"
    return str(value)


def _normalize(table: str, column: str, value: str) -> str:
    """Berka's encodings for dates given in ISO form; everything else as it is."""
    if (table, column) in _DATE_COLUMNS or (table, column) == ("card", "issued"):
        iso = _ISO_DATE.match(value)
        if iso:
            value = f"{iso[1][2:]}{iso[2]}{iso[3]}" + (f" {iso[4]}:{iso[5]}:{iso[6]}" if iso[4] else "")
            if (table, column) in _DATE_COLUMNS:
                value = value[:6]
        if (table, column) == ("card", "issued") and len(value) == 6:
            value += " 00:00:00"
    return value
